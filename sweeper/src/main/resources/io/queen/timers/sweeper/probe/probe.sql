-- One read: the database clock, the earliest visible_at, the due count up to the cap.
SELECT db_now, next_visible_at, due FROM queen.timer_probe_v1(?)
