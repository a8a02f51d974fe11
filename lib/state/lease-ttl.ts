/**
 * How long a run's lease on its thread lasts in a shared store without
 * renewal (`IAC_CODE_AGUI_LEASE_TTL_MS`); its holder renews it every third
 * of that. An instance that dies mid-run leaves its leases to expire, so its
 * threads wait at most this long before another instance serves them.
 */
export const DEFAULT_LEASE_TTL_MS = 15_000;
/** Below this a renewal (every third) would race a loaded machine's event loop. */
export const MIN_LEASE_TTL_MS = 300;
