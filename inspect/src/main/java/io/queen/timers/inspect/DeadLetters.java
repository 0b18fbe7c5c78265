package io.queen.timers.inspect;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.timers.client.command.TimerCommand;
import io.queen.timers.client.command.TraceParent;
import io.queen.timers.log.codec.Compression;
import io.queen.timers.log.codec.Frame;
import io.queen.timers.log.codec.TxnHash;
import io.queen.timers.log.read.LogReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * The sweeper's dead letters (queen.log_dlq rows of consumer group {@code __timer__}) for operators, whichever door
 * they come by (the CLI's {@code dead-letters}, the HTTP API's {@code /api/v1/dead-letters}): read through
 * queen.timer_dead_letters_v1, removed through queen.timer_dead_letter_remove_v1 (R__timer_dead_letters.sql), which
 * writes the {@code dead_letter_removed} audit event. A replay is sent by the caller through the command topic with
 * its own sender; this class decides what to send, where, and whether it was sent already.
 */
public final class DeadLetters {

    /** Most rows one list returns (the function clamps to it too). */
    public static final int MAX_PAGE = 1000;

    private static final ObjectMapper JSON = new ObjectMapper();

    private final DataSource ds;

    public DeadLetters(DataSource ds) {
        this.ds = ds;
    }

    /** A request the database or the dead letter refuses; the message is the operator's to read (no other tenant's data). */
    public static final class Refused extends RuntimeException {
        public enum Kind { NOT_FOUND, CONFLICT, INVALID }

        public final Kind kind;

        public Refused(Kind kind, String message) {
            super(message, null, false, false);
            this.kind = kind;
        }
    }

    /** One row of queen.timer_dead_letters_v1; {@code payload} as the function renders it (JSON text). */
    public record Letter(UUID id, UUID tenant, String queue, String partition, String timerKey, String txn, UUID messageId,
                         String payload, String error, int attempts, Instant failedAt) {

        /** The fields list and show print (no payload), the CLI's JSON and the API's answer alike. */
        public Map<String, Object> fields() {
            Map<String, Object> f = new LinkedHashMap<>();
            f.put("id", id.toString());
            f.put("tenant", tenant.toString());
            f.put("queue", queue);
            f.put("partition", partition);
            f.put("timerKey", timerKey);
            f.put("txn", txn);
            f.put("messageId", messageId == null ? null : messageId.toString());
            f.put("error", error);
            f.put("attempts", attempts);
            f.put("failedAt", failedAt.toString());
            return f;
        }

        /** The payload as a JSON tree (null when absent or unreadable). */
        public JsonNode payloadJson() {
            return json(payload);
        }

        /** Whether a command can carry the payload: JSON as kept, or a clear zstd payload that decompresses to JSON. */
        public boolean payloadIsJson() {
            return commandPayload() != null;
        }

        /** Whether a replay can send it: its payload is JSON and its key is recorded. */
        public boolean replayable() {
            return payloadIsJson() && timerKey != null;
        }

        /**
         * The payload as a command carries it (JSON text), or null when none can: kept as base64 (not JSON, or
         * encrypted). The sweeper's dead-letter keeps a compressed payload as the row stored it (the database
         * keeps the row's payload, never bytes the caller passes, and cannot decompress zstd), so it is decompressed
         * here, bounded by the log's frame limit.
         */
        public String commandPayload() {
            JsonNode p = json(payload);
            boolean lossless = p != null && p.isObject() && p.size() == 3 && p.has("encoding") && p.has("encrypted") && p.has("data");
            if (!lossless) {
                return payload;
            }
            if (!"zstd+base64".equals(p.get("encoding").asText()) || p.get("encrypted").asBoolean()) {
                return null;
            }
            try {
                byte[] raw = Compression.decompress(Base64.getDecoder().decode(p.get("data").asText()), Frame.MAX_PAYLOAD_BYTES);
                String text = new String(raw, StandardCharsets.UTF_8);
                return JSON.readTree(text) != null ? text : null;
            } catch (RuntimeException | IOException e) {
                return null; // not one zstd frame, too large, or not JSON: kept, not replayable
            }
        }

        /** How the payload is kept when no command can carry it ("base64", "zstd+base64" encrypted ...). */
        String encoding() {
            JsonNode p = json(payload);
            return p != null && p.has("encoding") ? p.get("encoding").asText() : "base64";
        }
    }

    /** What queen.timer_dead_letter_remove_v1 answered: the removal's tenant, queue, key and (replay) what it saw. */
    public record Removed(UUID tenant, String queue, String timerKey, String state) {}

    /**
     * What a replay sends: the key, and {@code already} 'pending' or 'fired' when the timer is back already (a run before
     * this one sent it: remove without sending), null when the command must be sent.
     */
    public record Replay(Letter letter, String timerKey, String already) {

        /** The schedule command, as a producer would send it, with {@code trace} (its verdict and removal carry it). */
        public TimerCommand command(Duration delay, TraceParent trace, String token) {
            return TimerCommand.schedule(letter.queue(), timerKey).partition(letter.partition()).txn(letter.txn())
                    .payload(letter.commandPayload()).delay(delay).trace(trace).auth(token);
        }
    }

    /** Up to {@code limit} (1..{@value #MAX_PAGE}) dead letters, oldest first; tenant and queue null for every one. */
    public List<Letter> list(UUID tenant, String queue, int limit) throws SQLException {
        return read(tenant, queue, null, limit);
    }

    /** The dead letter, whichever tenant it is (the caller checks the tenant it may see). */
    public Optional<Letter> one(UUID id) throws SQLException {
        List<Letter> l = read(null, null, id, 1);
        return l.isEmpty() ? Optional.empty() : Optional.of(l.get(0));
    }

    private List<Letter> read(UUID tenant, String queue, UUID id, int limit) throws SQLException {
        List<Letter> out = new ArrayList<>();
        try (Connection c = ds.getConnection();
                PreparedStatement st = c.prepareStatement("SELECT id, tenant_id, queue, \"partition\", timer_key, txn, message_id, payload::text AS payload,"
                        + " error, attempts, failed_at FROM queen.timer_dead_letters_v1(?, ?, ?, ?)")) {
            st.setObject(1, tenant, Types.OTHER);
            st.setString(2, queue);
            st.setObject(3, id, Types.OTHER);
            st.setInt(4, limit);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    out.add(new Letter(rs.getObject("id", UUID.class), rs.getObject("tenant_id", UUID.class), rs.getString("queue"),
                            rs.getString("partition"), rs.getString("timer_key"), rs.getString("txn"),
                            rs.getObject("message_id", UUID.class), rs.getString("payload"), rs.getString("error"), rs.getInt("attempts"),
                            rs.getTimestamp("failed_at").toInstant()));
                }
            }
        }
        return out;
    }

    /**
     * Removes the dead letter ({@code how}: replayed or dropped) with the caller's reason; the database checks a replay's
     * evidence and writes the audit event. @throws Refused its refusals an operator acts on
     */
    public Removed remove(UUID id, String how, String reason, String key, String txn, UUID verdictEvent, TraceParent trace,
                          String clientLabel) throws SQLException {
        try (Connection c = ds.getConnection();
                PreparedStatement st = c.prepareStatement("SELECT tenant_id, queue, timer_key, state"
                        + " FROM queen.timer_dead_letter_remove_v1(?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
            st.setObject(1, id, Types.OTHER);
            st.setString(2, how);
            st.setString(3, reason);
            st.setString(4, key);
            st.setBytes(5, txn == null ? null : TxnHash.of(txn));
            st.setObject(6, verdictEvent, Types.OTHER);
            st.setString(7, trace == null ? null : trace.traceId());
            st.setString(8, trace == null ? null : trace.spanId());
            st.setString(9, clientLabel);
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                return new Removed(rs.getObject("tenant_id", UUID.class), rs.getString("queue"), rs.getString("timer_key"),
                        rs.getString("state"));
            }
        } catch (SQLException e) {
            // the database's answers an operator acts on: gone already (P0002), refused (55000), a bad argument (22023)
            Refused.Kind kind = switch (String.valueOf(e.getSQLState())) {
                case "P0002" -> Refused.Kind.NOT_FOUND;
                case "55000" -> Refused.Kind.CONFLICT;
                case "22023" -> Refused.Kind.INVALID;
                default -> null;
            };
            if (kind == null) {
                throw e;
            }
            String m = String.valueOf(e.getMessage()).lines().findFirst().orElse("");
            throw new Refused(kind, m.startsWith("ERROR: ") ? m.substring("ERROR: ".length()) : m);
        }
    }

    /**
     * What replaying {@code l} sends, checked before anything is sent: its key (recorded, or {@code key} for a dead
     * letter written before keys were recorded; {@code keyOption} names how the caller gives one), a payload a command
     * can carry, and the database's evidence of a run before this one.
     */
    public Replay replay(Letter l, String key, String keyOption) throws SQLException {
        String timerKey = l.timerKey() != null ? l.timerKey() : key;
        if (timerKey == null) {
            throw new Refused(Refused.Kind.INVALID, "dead letter " + l.id() + " has no recorded timer key (its queen.timer_dlq_keys row is gone): name it"
                    + " with " + keyOption + " (the timerKey of its dead_lettered event)");
        }
        if (l.timerKey() != null && key != null && !l.timerKey().equals(key)) {
            throw new Refused(Refused.Kind.INVALID, "dead letter " + l.id() + " is timer " + l.queue() + "/" + l.timerKey() + ", not " + key);
        }
        if (!l.payloadIsJson()) {
            throw new Refused(Refused.Kind.CONFLICT, "dead letter " + l.id() + " keeps its payload as " + l.encoding()
                    + " (not JSON, or encrypted): a command carries JSON only, so it cannot be replayed; drop it and have its producer send it again");
        }
        return new Replay(l, timerKey, evidence(l, timerKey));
    }

    /** 'pending' or 'fired' when the timer is back already (a run before this one sent it); null when it is not. */
    private String evidence(Letter l, String timerKey) throws SQLException {
        try (Connection c = ds.getConnection();
                PreparedStatement st = c.prepareStatement("SELECT txn FROM queen.timer_peek_v2(?, ?, ?)")) {
            st.setObject(1, l.tenant(), Types.OTHER);
            st.setString(2, l.queue());
            st.setString(3, timerKey);
            try (ResultSet rs = st.executeQuery()) {
                if (rs.next()) {
                    if (rs.getString("txn").equals(l.txn())) {
                        return "pending";
                    }
                    throw new Refused(Refused.Kind.CONFLICT, "timer " + l.queue() + "/" + timerKey + " is pending with another txn ("
                            + rs.getString("txn") + "): a replay would replace it; cancel it first, or drop the dead letter");
                }
            }
        }
        boolean fired = new LogReader(ds).find(l.tenant(), l.queue(), l.txn()).stream()
                .anyMatch(h -> h.partition().equals(l.partition()) && !h.createdAt().isBefore(l.failedAt()));
        return fired ? "fired" : null;
    }

    /**
     * The command topic that stands for {@code tenant}, from the database's record of what each bridge group registered
     * at start (queen.bridge_topics), never from the caller's settings: the bridge stages a command under the
     * tenant of the topic it came in on, so a topic of another tenant would put this tenant's payload into that tenant's
     * queue. {@code chosen} (null: the only one) only chooses among the tenant's own topics; {@code topicOption} names
     * how the caller chooses. PRICE: a topic no running (or past) bridge registered cannot be replayed to; start the
     * bridge that reads it first.
     */
    public String commandTopic(UUID id, UUID tenant, String chosen, String topicOption) throws SQLException {
        Map<String, Set<UUID>> tenants = BridgeTopics.read(ds);
        List<String> own = tenants.entrySet().stream().filter(e -> e.getValue().equals(Set.of(tenant))).map(Map.Entry::getKey).toList();
        if (chosen != null) {
            Set<UUID> of = tenants.get(chosen);
            if (of == null) {
                throw new Refused(Refused.Kind.INVALID, "topic " + chosen + " is not a command topic any bridge registered (queen.bridge_topics):"
                        + " replay refuses a topic whose tenant the database does not know; dead letter " + id + " is tenant " + tenant
                        + (own.isEmpty() ? "" : ", whose command topics are " + String.join(", ", own)));
            }
            if (!of.equals(Set.of(tenant))) {
                throw new Refused(Refused.Kind.INVALID, "topic " + chosen + " stands for tenant " + of.stream().map(UUID::toString)
                        .collect(Collectors.joining(", ")) + ", and dead letter " + id + " is tenant " + tenant
                        + ": replay refuses to send one tenant's payload to another's topic"
                        + (own.isEmpty() ? "" : " (its command topics: " + String.join(", ", own) + ")"));
            }
            return chosen;
        }
        if (own.isEmpty()) {
            throw new Refused(Refused.Kind.CONFLICT, "no bridge registered a command topic for tenant " + tenant + " (queen.bridge_topics):"
                    + " start the bridge that reads that tenant's commands, then replay dead letter " + id + " again");
        }
        if (own.size() > 1) {
            throw new Refused(Refused.Kind.INVALID, "tenant " + tenant + " has several command topics (" + String.join(", ", own)
                    + "): name one with " + topicOption);
        }
        return own.get(0);
    }

    static JsonNode json(String text) {
        try {
            return text == null ? null : JSON.readTree(text);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** queen.bridge_topics: each command topic with the tenants bridges registered it for. */
    static final class BridgeTopics {
        private BridgeTopics() {}

        static Map<String, Set<UUID>> read(DataSource ds) throws SQLException {
            Map<String, Set<UUID>> tenants = new TreeMap<>();
            try (Connection c = ds.getConnection();
                    PreparedStatement st = c.prepareStatement("SELECT topic, tenant_id FROM queen.bridge_topics");
                    ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    tenants.computeIfAbsent(rs.getString("topic"), t -> new TreeSet<>()).add(rs.getObject("tenant_id", UUID.class));
                }
            }
            return tenants;
        }
    }
}
