package io.queen.timers.bridge;

import static io.queen.timers.bridge.BridgeEndToEndIT.bytes;

import io.queen.timers.client.command.TimerCommand;
import io.queen.timers.client.command.WireFormat;
import io.queen.timers.client.command.RejectReason;
import java.time.Duration;
import java.util.Arrays;
import java.util.Random;
import org.apache.kafka.common.header.internals.RecordHeaders;

/** A generated record that is not a valid command, and the reason the bridge must give. */
record BadRecord(byte[] key, byte[] value, RecordHeaders headers, RejectReason reason) {

    private static final String Q = "bad.x";
    private static final String[] SERVER_OWNED = {"tenantId", "tenant_id", "producerSub", "messageId", "attempts", "claimToken",
            "claimedUntil", "Tenant", "claimed_until", "payloadZstd"};

    static BadRecord generate(int i, Random r) {
        String k = "b-" + i;
        byte[] key = WireFormat.keyBytes(Q, k);
        String ok = "\"queue\":\"" + Q + "\",\"timerKey\":\"" + k + "\",\"txn\":\"t\",\"payload\":{\"i\":" + i + "}";
        return switch (i % 11) {
            case 0 -> {
                byte[] v = new byte[1 + r.nextInt(200)];
                r.nextBytes(v);
                v[0] = (byte) (0x80 | v[0]); // never a valid first byte of JSON text
                yield new BadRecord(key, v, null, RejectReason.MALFORMED_JSON);
            }
            case 1 -> {
                byte[] full = TimerCommand.schedule(Q, k).delay(Duration.ofMinutes(1)).txn("t").payload("{\"i\":" + i + "}").envelope("commands").value();
                yield new BadRecord(key, Arrays.copyOf(full, 1 + r.nextInt(full.length - 1)), null, RejectReason.MALFORMED_JSON);
            }
            case 2 -> i % 2 == 0
                    ? json(key, "{\"op\":\"cancel\",\"queue\":" + i + ",\"timerKey\":\"" + k + "\"}", RejectReason.WRONG_TYPE)
                    : json(key, "{\"op\":\"schedule\"," + ok + ",\"delayMs\":\"60000\"}", RejectReason.WRONG_TYPE);
            case 3 -> json(key, "{\"op\":\"schedule\",\"queue\":\"" + Q + "\",\"timerKey\":\"" + k + "\",\"txn\":\"t\",\"delayMs\":1,"
                    + "\"payload\":\"" + "x".repeat(70_000) + "\"}", RejectReason.PAYLOAD_TOO_LARGE);
            case 4 -> json(key, "{\"op\":\"schedule\"," + ok + ",\"delayMs\":1,\"" + SERVER_OWNED[i % SERVER_OWNED.length] + "\":\"x\"}",
                    RejectReason.SERVER_OWNED_FIELD);
            case 5 -> new BadRecord(i % 2 == 0 ? null : WireFormat.keyBytes(Q, "someone-else"),
                    TimerCommand.schedule(Q, k).delay(Duration.ofMinutes(1)).txn("t").payload("1").envelope("commands").value(), null, RejectReason.KEY_MISMATCH);
            case 6 -> switch ((i / 11) % 4) {
                case 0 -> json(key, "{\"op\":\"cancel\",\"queue\":\"" + Q + "\",\"timerKey\":\"nul\\u0000" + k + "\"}", RejectReason.BAD_TIMER_KEY);
                case 1 -> json(key, "{\"op\":\"cancel\",\"queue\":\"" + Q + "\",\"timerKey\":\"\\ud83d" + k + "\"}", RejectReason.BAD_TIMER_KEY);
                case 2 -> json(key, "{\"op\":\"cancel\",\"queue\":\"bad.é\",\"timerKey\":\"" + k + "\"}", RejectReason.BAD_QUEUE);
                default -> json(key, "{\"op\":\"cancel\",\"queue\":\"" + Q + "\",\"timerKey\":\"" + "😀".repeat(513) + "\"}", RejectReason.BAD_TIMER_KEY);
            };
            case 7 -> json(key, "{\"op\":\"Schedule\"," + ok + ",\"delayMs\":1}", RejectReason.UNKNOWN_OP);
            case 8 -> json(key, "{\"op\":\"schedule\",\"queue\":\"" + Q + "\",\"timerKey\":\"" + k + "\",\"payload\":1,\"delayMs\":1}",
                    RejectReason.MISSING_FIELD);
            case 9 -> i % 2 == 0
                    ? json(key, "{\"op\":\"schedule\"," + ok + ",\"delayMs\":1,\"deliverAt\":\"2030-01-01T00:00:00Z\"}", RejectReason.BAD_TIME)
                    : json(key, "{\"op\":\"reschedule\"," + ok + ",\"delayMs\":" + Duration.ofDays(365).toMillis() + "}", RejectReason.HORIZON);
            default -> {
                RecordHeaders h = new RecordHeaders();
                h.add("queen-op", bytes("cancel")).add("queen-queue", bytes(Q)).add("queen-timer-key", bytes(k));
                RejectReason reason;
                if (i % 3 == 0) {
                    h.add("queen-tenant", bytes("00000000-0000-0000-0000-000000000002"));
                    reason = RejectReason.SERVER_OWNED_FIELD;
                } else if (i % 3 == 1) {
                    h.add("queen-queue", bytes(Q));
                    reason = RejectReason.BAD_HEADER;
                } else {
                    h.add("queen-partition", new byte[] {(byte) 0xC3, (byte) 0x28});
                    reason = RejectReason.BAD_HEADER;
                }
                yield new BadRecord(key, null, h, reason);
            }
        };
    }

    private static BadRecord json(byte[] key, String value, RejectReason reason) {
        return new BadRecord(key, bytes(value), null, reason);
    }
}
