//! mempalace-embed-candle
