-- The pending occurrence of each recurring series of a queue scheduled with a txn: tenant, queue, series txn.
SELECT timer_key, next_occurrence, txn, recurrence, state
  FROM queen.timer_series_v1(?, ?, ?)
