/**
 * The HTTP API (docs/http-api.md): {@code POST /api/v1/timers} and {@code DELETE /api/v1/timers/{queue}/{timerKey}},
 * a front door onto the command topics, not a second way into the database. Every operation becomes the command
 * record a Kafka producer would write (same topic, key, envelope and {@code queen-auth} token), and its answer is the
 * bridge's verdict read back from the audit topic: one judge of a command (the bridge), one set of reject reasons,
 * tenant rules, quotas, encryption and audit events, whichever door a command came in by.
 *
 * <p>Its own process role ({@code queen-timers http}), beside bridge and sweeper. PRICE of the separate process: one
 * more deployment to run, watch and scale (its own /health and /metrics on http.port, its own heap); a request pays a
 * Kafka round trip and the bridge's batch to learn its verdict (tens of milliseconds, more while the bridge is behind)
 * instead of a direct write; and each command sender reads the whole audit topic of its tenant. In return the API can
 * be scaled and exposed on its own, holds no database credentials for writing, and a flood of HTTP requests reaches
 * the database only at the bridge's pace.
 */
package io.queen.timers.http;
