//! Token-bucket rate limiting for the public API.
//!
//! Each API key owns a bucket of 100 tokens that refills at 10 tokens per second. A request
//! costs one token; bulk export costs twenty. When the bucket is empty the server answers
//! 429 Too Many Requests with a Retry-After header computed from the refill rate.

use std::time::Instant;

pub struct Bucket {
    tokens: f64,
    capacity: f64,
    refill_per_sec: f64,
    last: Instant,
}

impl Bucket {
    pub fn new(capacity: f64, refill_per_sec: f64) -> Self {
        Bucket { tokens: capacity, capacity, refill_per_sec, last: Instant::now() }
    }

    /// Takes `cost` tokens if available; otherwise returns the seconds to wait.
    pub fn take(&mut self, cost: f64) -> Result<(), f64> {
        let now = Instant::now();
        let elapsed = now.duration_since(self.last).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.refill_per_sec).min(self.capacity);
        self.last = now;
        if self.tokens >= cost {
            self.tokens -= cost;
            Ok(())
        } else {
            Err((cost - self.tokens) / self.refill_per_sec)
        }
    }
}
