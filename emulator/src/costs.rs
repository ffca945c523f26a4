//! What each request costs on a metered plan, in compute units, so a benchmark can say what a
//! day of indexing would cost. The figures are Alchemy's published per-method costs (the most
//! common metering; other providers weigh `eth_getLogs` similarly heavier than a header).

/// Compute units of one call of `method`.
pub fn compute_units(method: &str) -> u64 {
    match method {
        "eth_chainId" | "net_version" => 0,
        "eth_blockNumber" => 10,
        "eth_getTransactionReceipt" => 15,
        "eth_getBlockByNumber" | "eth_getBlockByHash" => 16,
        "eth_getBalance" => 19,
        "eth_call" | "eth_getCode" | "eth_getStorageAt" => 26,
        "eth_getLogs" => 75,
        _ => 26,
    }
}
