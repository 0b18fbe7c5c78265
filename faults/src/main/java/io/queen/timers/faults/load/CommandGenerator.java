package io.queen.timers.faults.load;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.queen.timers.client.command.WireFormat;
import io.queen.timers.faults.stack.Stack;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;

/**
 * The seeded command stream: schedule / reschedule / cancel over {@code keys} keys in {@link #QUEUES}
 * queues and {@link #PARTITIONS} log partitions, for two tenants that use the same queue and key names
 * (one command topic each); delays 0..3 s, a few deliverAt in the past; a fraction of hostile records
 * (every reject reason the bridge knows, and shapes meant to hurt a parser), a fraction of poisoned
 * schedules (own keys, a txn the destination refuses), some large payloads. Every record carries a
 * {@code faults-seq} header (not a {@code queen-} header, so the bridge ignores it) for the checker.
 *
 * <p>Same seed, same stream (what the broker makes of it under faults is the run's business).
 */
public final class CommandGenerator {

    public static final String SEQ_HEADER = "faults-seq";
    public static final int QUEUES = 4;
    public static final String[] PARTITIONS = {"Default", "p1", "p2"};
    public static final String POISON_TXN_PREFIX = "poison-";

    private static final ObjectMapper JSON = new ObjectMapper();

    private final SplittableRandom random;
    private final int keys;
    private final double hostileFraction;
    private final double poisonFraction;
    private final double largeFraction;

    public CommandGenerator(long seed, int keys, double hostileFraction, double poisonFraction, double largeFraction) {
        this.random = new SplittableRandom(seed);
        this.keys = keys;
        this.hostileFraction = hostileFraction;
        this.poisonFraction = poisonFraction;
        this.largeFraction = largeFraction;
    }

    public GeneratedCommand next(long seq) {
        boolean tenantB = random.nextBoolean();
        String topic = tenantB ? Stack.COMMANDS_B : Stack.COMMANDS_A;
        String queue = "faults.q" + random.nextInt(QUEUES);
        String key = "key-" + random.nextInt(keys);
        double dice = random.nextDouble();
        if (dice < hostileFraction) {
            return new GeneratedCommand(seq, CommandKind.HOSTILE, hostile(seq, topic, queue, key), null);
        }
        if (dice < hostileFraction + poisonFraction) {
            String txn = POISON_TXN_PREFIX + (tenantB ? "b-" : "a-") + seq;
            ObjectNode cmd = JSON.createObjectNode().put("op", "schedule").put("queue", queue).put("timerKey", "px-" + seq)
                    .put("partition", PARTITIONS[random.nextInt(PARTITIONS.length)]).put("delayMs", random.nextInt(2000)).put("txn", txn);
            cmd.set("payload", payload(seq, key, false));
            return new GeneratedCommand(seq, CommandKind.POISON, envelope(seq, topic, queue, "px-" + seq, cmd), txn);
        }
        return new GeneratedCommand(seq, CommandKind.VALID, valid(seq, topic, queue, key), null);
    }

    private ProducerRecord<byte[], byte[]> valid(long seq, String topic, String queue, String key) {
        double op = random.nextDouble();
        String partition = PARTITIONS[random.nextInt(PARTITIONS.length)];
        if (op < 0.2) {
            if (random.nextInt(5) == 0) {
                return headersForm(seq, topic, queue, key, "cancel", null, null, partition);
            }
            ObjectNode cmd = JSON.createObjectNode().put("op", "cancel").put("queue", queue).put("timerKey", key);
            return envelope(seq, topic, queue, key, cmd);
        }
        String opName = op < 0.75 ? "schedule" : "reschedule";
        String txn = "t-" + seq;
        ObjectNode payload = payload(seq, key, random.nextDouble() < largeFraction);
        if (random.nextInt(5) == 0) {
            return headersForm(seq, topic, queue, key, opName, txn, payload, partition);
        }
        ObjectNode cmd = JSON.createObjectNode().put("op", opName).put("queue", queue).put("timerKey", key).put("partition", partition);
        int when = random.nextInt(20);
        if (when == 0) {
            cmd.put("deliverAt", Instant.now().minusMillis(random.nextInt(5_000)).toString());
        } else if (when == 1) {
            cmd.put("deliverAt", Instant.now().plusMillis(random.nextInt(3_000)).toString());
        } else {
            cmd.put("delayMs", random.nextInt(3_000));
        }
        cmd.put("txn", txn);
        cmd.set("payload", payload);
        return envelope(seq, topic, queue, key, cmd);
    }

    private ObjectNode payload(long seq, String key, boolean large) {
        ObjectNode p = JSON.createObjectNode().put("seq", seq).put("key", key).put("note", "äö ✓ \"quoted\"");
        int padLength = large ? 8_000 + random.nextInt(56_000) : random.nextInt(200);
        StringBuilder pad = new StringBuilder(padLength);
        for (int i = 0; i < padLength; i++) {
            pad.append((char) ('a' + random.nextInt(26)));
        }
        return p.put("pad", pad.toString());
    }

    private ProducerRecord<byte[], byte[]> headersForm(long seq, String topic, String queue, String key, String op, String txn,
                                                       ObjectNode payload, String partition) {
        List<Header> headers = new ArrayList<>();
        headers.add(header("queen-op", op));
        headers.add(header("queen-queue", queue));
        headers.add(header("queen-timer-key", key));
        if (txn != null) {
            headers.add(header("queen-partition", partition));
            headers.add(header("queen-delay-ms", Integer.toString(random.nextInt(3_000))));
            headers.add(header("queen-txn", txn));
        }
        byte[] value = payload == null ? new byte[0] : payload.toString().getBytes(StandardCharsets.UTF_8);
        return record(seq, topic, utf8(WireFormat.key(queue, key)), value, headers);
    }

    /** Every reject reason, and records meant to hurt: each must get one {@code rejected} verdict and stop nothing. */
    private ProducerRecord<byte[], byte[]> hostile(long seq, String topic, String queue, String key) {
        byte[] k = utf8(WireFormat.key(queue, key));
        String base = "\"queue\":\"" + queue + "\",\"timerKey\":\"" + key + "\"";
        String schedule = "{\"op\":\"schedule\"," + base + ",\"delayMs\":100,\"txn\":\"h-" + seq + "\",\"payload\":{}";
        return switch (random.nextInt(22)) {
            case 0 -> record(seq, topic, k, utf8("{not json"), List.of());
            case 1 -> record(seq, topic, k, new byte[] {'{', (byte) 0xC3, 0x28, '}'}, List.of());
            case 2 -> record(seq, topic, k, null, List.of());
            case 3 -> record(seq, topic, utf8(queue + "/someone-else"), utf8(schedule + "}"), List.of());
            case 4 -> record(seq, topic, null, utf8(schedule + "}"), List.of());
            case 5 -> record(seq, topic, utf8("bad queue!/" + key),
                    utf8("{\"op\":\"schedule\",\"queue\":\"bad queue!\",\"timerKey\":\"" + key + "\",\"delayMs\":1,\"txn\":\"x\",\"payload\":1}"), List.of());
            // A producer trying to write for the other tenant.
            case 6 -> record(seq, topic, k, utf8(schedule + ",\"tenant\":\"" + Stack.TENANT_B + "\"}"), List.of());
            case 7 -> record(seq, topic, k, utf8("{\"op\":\"explode\"," + base + "}"), List.of());
            case 8 -> record(seq, topic, k, utf8("{\"op\":\"schedule\"," + base + ",\"delayMs\":\"100\",\"txn\":\"x\",\"payload\":{}}"), List.of());
            case 9 -> record(seq, topic, k, utf8("{\"op\":\"schedule\",\"op\":\"cancel\"," + base + "}"), List.of());
            case 10 -> record(seq, topic, k, utf8("{\"op\":\"schedule\"," + base + ",\"delayMs\":1,\"txn\":\"x\",\"payload\":"
                    + "[".repeat(5_000) + "]".repeat(5_000) + "}"), List.of());
            case 11 -> record(seq, topic, k, utf8("{\"op\":\"schedule\"," + base + ",\"delayMs\":1,\"txn\":\"a\\u0000b\",\"payload\":{}}"), List.of());
            case 12 -> record(seq, topic, k, utf8(schedule + ",\"deliverAt\":\"2030-01-01T00:00:00Z\"}"), List.of());
            case 13 -> record(seq, topic, k, utf8("{\"op\":\"schedule\"," + base + ",\"delayMs\":17280000000,\"txn\":\"x\",\"payload\":{}}"), List.of());
            case 14 -> record(seq, topic, k, utf8("{\"op\":\"schedule\"," + base + ",\"delayMs\":1,\"txn\":\"x\",\"payload\":\""
                    + "z".repeat(Stack.PAYLOAD_MAX_BYTES + 10) + "\"}"), List.of());
            case 15 -> record(seq, topic, k, utf8("{}"), List.of(header("queen-op", "schedule"), header("queen-op", "cancel"),
                    header("queen-queue", queue), header("queen-timer-key", key)));
            case 16 -> {
                String longKey = "k".repeat(600);
                yield record(seq, topic, utf8(WireFormat.key(queue, longKey)), utf8("{\"op\":\"cancel\",\"queue\":\"" + queue + "\",\"timerKey\":\"" + longKey + "\"}"), List.of());
            }
            case 17 -> record(seq, topic, k, utf8("{\"op\":\"cancel\",\"queue\":\"" + queue + "\",\"timerKey\":\"\\ud800\"}"), List.of());
            case 18 -> record(seq, topic, k, utf8("{\"op\":\"cancel\"," + base + ",\"txn\":\"x\"}"), List.of());
            case 19 -> record(seq, topic, k, utf8("[1,2,3]"), List.of());
            case 20 -> record(seq, topic, k, utf8("{\"op\":\"schedule\"," + base + ",\"delayMs\":123456789012345678901234567890,\"txn\":\"x\",\"payload\":{}}"), List.of());
            default -> record(seq, topic, k, utf8("{\"op\":\"schedule\"," + base + ",\"deliverAt\":\"yesterday\",\"txn\":\"x\",\"payload\":{}}"), List.of());
        };
    }

    private static ProducerRecord<byte[], byte[]> envelope(long seq, String topic, String queue, String key, ObjectNode cmd) {
        return record(seq, topic, utf8(WireFormat.key(queue, key)), utf8(cmd.toString()), List.of());
    }

    private static ProducerRecord<byte[], byte[]> record(long seq, String topic, byte[] key, byte[] value, List<Header> headers) {
        List<Header> all = new ArrayList<>(headers);
        all.add(header(SEQ_HEADER, Long.toString(seq)));
        return new ProducerRecord<>(topic, null, key, value, all);
    }

    private static Header header(String name, String value) {
        return new RecordHeader(name, utf8(value));
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
