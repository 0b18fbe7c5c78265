-- Release (V034): hand claimed rows back untouched; only rows that still carry the given token.
SELECT queen.timer_release_v1(?, ?, ?, ?)
