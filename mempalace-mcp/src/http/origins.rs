//! The browser origins a server accepts as its own: the scheme it serves, the port it
//! listens on, and the names clients reach it by (the loopback names on loopback, the
//! allowed `Host` values, the bound address). Every other `Origin` is refused by rmcp's check.

use std::net::{IpAddr, SocketAddr};

/// The origins (`scheme://host:port`) a page served by this server itself would send.
pub fn own_origins(address: SocketAddr, tls: bool, allowed_hosts: &[String]) -> Vec<String> {
    let scheme = if tls { "https" } else { "http" };
    let port = address.port();
    let mut hosts: Vec<String> = Vec::new();
    if address.ip().is_loopback() {
        hosts.extend(["localhost", "127.0.0.1", "[::1]"].map(String::from));
    }
    if !address.ip().is_unspecified() {
        hosts.push(match address.ip() {
            IpAddr::V4(ip) => ip.to_string(),
            IpAddr::V6(ip) => format!("[{ip}]"),
        });
    }
    let mut origins: Vec<String> = hosts
        .iter()
        .map(|h| format!("{scheme}://{h}:{port}"))
        .collect();
    for host in allowed_hosts {
        // An allowed `name:port` names its port (a proxy's); a bare name, the server's.
        let with_port = match host.rsplit_once(':') {
            Some((_, p)) if !host.ends_with(']') && p.parse::<u16>().is_ok() => host.clone(),
            _ => format!("{host}:{port}"),
        };
        origins.push(format!("{scheme}://{with_port}"));
    }
    origins.sort();
    origins.dedup();
    origins
}

/// Whether `origin` is a usable `--allowed-origin` value: `null`, or `http`/`https` with a
/// host and an optional port (a number or `*`) and nothing after it.
pub fn is_valid_origin(origin: &str) -> bool {
    if origin == "null" {
        return true;
    }
    let Some((scheme, rest)) = origin.split_once("://") else {
        return false;
    };
    if !matches!(scheme, "http" | "https") || rest.is_empty() || rest.contains(['/', '?', '#', '@'])
    {
        return false;
    }
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) if !rest.ends_with(']') => (h, Some(p)),
        _ => (rest, None),
    };
    let port_ok = port.is_none_or(|p| p == "*" || p.parse::<u16>().is_ok());
    !host.is_empty() && port_ok && host.parse::<axum::http::uri::Authority>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_checked_before_the_server_starts() {
        for ok in [
            "null",
            "https://app.example",
            "http://localhost:*",
            "http://[::1]:8080",
        ] {
            assert!(is_valid_origin(ok), "{ok}");
        }
        for bad in [
            "app.example",
            "ftp://x",
            "https://",
            "https://a/b",
            "http://a:port",
            "*",
        ] {
            assert!(!is_valid_origin(bad), "{bad}");
        }
    }

    #[test]
    fn loopback_serves_its_loopback_names_on_its_own_port() {
        let own = own_origins("127.0.0.1:8765".parse().unwrap(), false, &[]);
        assert_eq!(
            own,
            [
                "http://127.0.0.1:8765",
                "http://[::1]:8765",
                "http://localhost:8765"
            ]
        );
    }

    #[test]
    fn allowed_hosts_and_tls_name_the_public_origins() {
        let hosts = ["mem.example".to_string(), "proxy.example:443".to_string()];
        let own = own_origins("0.0.0.0:8443".parse().unwrap(), true, &hosts);
        assert_eq!(
            own,
            ["https://mem.example:8443", "https://proxy.example:443"]
        );
    }
}
