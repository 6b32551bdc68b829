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
        match host.rsplit_once(':') {
            // An allowed `name:port` names its port (a proxy's, which may terminate TLS):
            // both schemes on that port.
            Some((_, p)) if !host.ends_with(']') && p.parse::<u16>().is_ok() => {
                origins.push(format!("http://{host}"));
                origins.push(format!("https://{host}"));
            }
            // A bare name is reached on the server's own port and scheme.
            _ => origins.push(format!("{scheme}://{host}:{port}")),
        }
    }
    origins.sort();
    origins.dedup();
    origins
}

/// `origin` as given to the Origin check: `null`, or `scheme://host:port` with the scheme's
/// default port (443, 80) made explicit, or `:*` kept; `None` when it is no origin (http or
/// https, a host, an optional port or `*`, nothing after). A browser omits the default port,
/// so `https://app.example` admits that page on 443 only, not on every port.
pub fn normalized_origin(origin: &str) -> Option<String> {
    if origin == "null" {
        return Some(origin.to_string());
    }
    let (scheme, rest) = origin.split_once("://")?;
    let default_port = match scheme {
        "http" => "80",
        "https" => "443",
        _ => return None,
    };
    if rest.is_empty() || rest.contains(['/', '?', '#', '@']) {
        return None;
    }
    let (host, port) = if let Some(bracketed) = rest.strip_prefix('[') {
        // An IPv6 literal: `[addr]` or `[addr]:port`.
        let (addr, after) = bracketed.split_once(']')?;
        if addr.is_empty()
            || !addr
                .chars()
                .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
        {
            return None;
        }
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':')?),
        };
        (format!("[{addr}]"), port)
    } else {
        let (host, port) = match rest.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (rest, None),
        };
        if host.is_empty() || host.parse::<axum::http::uri::Authority>().is_err() {
            return None;
        }
        (host.to_string(), port)
    };
    let port = match port {
        None => default_port,
        Some(p) if p == "*" || p.parse::<u16>().is_ok() => p,
        Some(_) => return None,
    };
    Some(format!("{scheme}://{host}:{port}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_checked_and_given_their_default_port_before_the_server_starts() {
        for (given, used) in [
            ("null", "null"),
            ("https://app.example", "https://app.example:443"),
            ("http://app.example", "http://app.example:80"),
            ("http://localhost:*", "http://localhost:*"),
            ("http://[::1]:8080", "http://[::1]:8080"),
            ("https://[::1]", "https://[::1]:443"),
        ] {
            assert_eq!(normalized_origin(given).as_deref(), Some(used), "{given}");
        }
        for bad in [
            "app.example",
            "ftp://x",
            "https://",
            "https://a/b",
            "http://a:port",
            "*",
            "https://app.example:443:*",
            "http://a:1:2",
            "http://[zz]:1",
        ] {
            assert_eq!(normalized_origin(bad), None, "{bad}");
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
            [
                "http://proxy.example:443",
                "https://mem.example:8443",
                "https://proxy.example:443"
            ]
        );
    }
}
