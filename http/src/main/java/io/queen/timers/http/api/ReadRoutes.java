package io.queen.timers.http.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.queen.timers.client.audit.AuditEvent;
import io.queen.timers.client.command.TraceParent;
import io.queen.timers.client.verdict.CommandSender;
import io.queen.timers.inspect.DeadLetters;
import io.queen.timers.inspect.PendingSeries;
import io.queen.timers.inspect.StoredOffsets;
import io.queen.timers.inspect.TimerInspector;
import io.queen.timers.inspect.TimerSummary;
import io.queen.timers.inspect.TimerView;
import io.queen.timers.log.codec.CodecException;
import io.queen.timers.log.codec.Frame;
import io.queen.timers.log.read.TxnHit;
import io.queen.timers.http.route.CommandTopics;
import io.queen.timers.http.send.SenderPool;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import javax.sql.DataSource;
import org.apache.kafka.common.KafkaException;

/**
 * The operator routes (api.reads.enabled): pending timers and series, peek, find, dead letters (list, show, replay,
 * drop) and offsets, each through the operator role's functions by the same code as the CLI's (module inspect), answered
 * as JSON. Tenancy: the caller's tenant is its target's (the token's topic, or the topic without auth), never the
 * request's; a dead letter of another tenant is answered 404 as one that does not exist, and offsets are those of its
 * tenant's command topics. Only an admin token (auth.admin.claim) or the topic without auth is served: a producer's
 * token acts on its own timers only (the bridge's ownership rule), and these routes show every producer's.
 *
 * <p>A replay is a schedule command written to the caller's command topic with the caller's token and answered by the
 * bridge's verdict, as the CLI's replay is: no second write path. The dead letter is removed by the database only once
 * it sees the timer staged again with its txn (or fired since), never on the word of this process.
 *
 * <p>Public for the console (io.queen.timers.http.console), which renders these same replies as HTML: one implementation
 * of every read, its tenancy and its admin check.
 */
public final class ReadRoutes {

    public static final String TIMERS_FIND = ApiServer.TIMERS + ":find";
    public static final String DEAD_LETTERS = "/api/v1/dead-letters";
    public static final String OFFSETS = "/api/v1/offsets";
    static final int DEFAULT_LIMIT = 100;
    /** Most next occurrences a peek shows. */
    static final int MAX_NEXT = 100;

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final SecureRandom RANDOM = new SecureRandom();

    /** A request the route answers with a problem. */
    public static final class Answer extends Exception {
        public final Problem problem;

        Answer(Problem problem) {
            super(problem.detail(), null, false, false);
            this.problem = problem;
        }
    }

    /** A JSON answer: its status and body. */
    public record Reply(int status, JsonNode body) {}

    private final TimerInspector timers;
    private final DeadLetters letters;
    private final StoredOffsets offsets;
    private final LogRanges ranges;
    private final Map<String, SenderPool> senders;
    private final Duration verdictTimeout;

    /**
     * @param dataSource a pool connected as a login of queen_operator
     * @param ranges     the process's one Admin client the offsets route asks the broker's log start and end with
     */
    ReadRoutes(DataSource dataSource, LogRanges ranges, Map<String, SenderPool> senders, Duration verdictTimeout) {
        this.timers = new TimerInspector(dataSource);
        this.letters = new DeadLetters(dataSource);
        this.offsets = new StoredOffsets(dataSource);
        this.ranges = ranges;
        this.senders = senders;
        this.verdictTimeout = verdictTimeout;
    }

    /** Whether {@code path} is one of these routes' own (beside GET on the write routes' paths). */
    static boolean owns(String path) {
        return path.equals(TIMERS_FIND) || path.equals(DEAD_LETTERS) || path.startsWith(DEAD_LETTERS + "/") || path.equals(OFFSETS);
    }

    /** The methods served on {@code path} (one of {@link #owns}'). */
    static List<String> allowed(String path) {
        if (path.startsWith(DEAD_LETTERS + "/")) {
            return path.endsWith("/replay") ? List.of("POST") : List.of("GET", "DELETE");
        }
        return List.of("GET");
    }

    public Reply handle(CommandTopics.Target caller, String method, String path, Map<String, String> query) throws Answer, SQLException {
        if (!caller.admin()) {
            throw new Answer(Problem.unauthorized(403, "the operator routes need a token with the admin claim (auth.admin.claim): a"
                    + " producer's token acts on its own timers only"));
        }
        UUID tenant = caller.tenant();
        if (path.equals(ApiServer.TIMERS)) {
            return list(tenant, query);
        }
        if (path.equals(TIMERS_FIND)) {
            return find(tenant, query);
        }
        if (path.startsWith(ApiServer.TIMERS + "/")) {
            Operations.TimerPath target;
            try {
                target = Operations.timerPath(path.substring(ApiServer.TIMERS.length() + 1));
            } catch (Operations.Refusal r) {
                throw new Answer(r.problem);
            }
            return peek(tenant, target.queue(), target.timerKey(), query);
        }
        if (path.equals(DEAD_LETTERS)) {
            int limit = limit(query, DeadLetters.MAX_PAGE);
            ArrayNode out = JSON.createArrayNode();
            letters.list(tenant, query.get("queue"), limit).forEach(l -> out.add(JSON.valueToTree(l.fields())));
            ObjectNode body = JSON.createObjectNode();
            body.set("deadLetters", out);
            return new Reply(200, body);
        }
        if (path.equals(OFFSETS)) {
            return offsets(tenant, query);
        }
        String rest = path.substring(DEAD_LETTERS.length() + 1);
        boolean replay = rest.endsWith("/replay");
        DeadLetters.Letter letter = letter(tenant, replay ? rest.substring(0, rest.length() - "/replay".length()) : rest);
        if (replay) {
            return replay(caller, letter, query);
        }
        if (method.equals("DELETE")) {
            return drop(caller, letter, query);
        }
        ObjectNode body = JSON.valueToTree(letter.fields());
        body.set("payload", letter.payloadJson());
        body.put("replayable", letter.replayable());
        return new Reply(200, body);
    }

    /** GET /api/v1/timers?queue=&limit=&cursor=: a page of the queue's pending timers and series, in key order. */
    private Reply list(UUID tenant, Map<String, String> query) throws Answer, SQLException {
        String queue = required(query, "queue");
        int limit = limit(query, TimerInspector.MAX_PAGE);
        String after = null;
        if (query.get("cursor") != null) {
            try {
                after = new String(Base64.getUrlDecoder().decode(query.get("cursor")), StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                throw new Answer(Problem.badRequest("cursor is not one this server gave (nextCursor of the previous page)"));
            }
        }
        List<TimerSummary> page = timers.list(tenant, queue, after, limit);
        ObjectNode body = JSON.createObjectNode();
        body.put("queue", queue);
        ArrayNode out = body.putArray("timers");
        for (TimerSummary t : page) {
            ObjectNode n = out.addObject();
            n.put("timerKey", t.timerKey());
            n.put("state", t.state().name().toLowerCase(Locale.ROOT));
            n.put("deliverAt", t.deliverAt().toString());
            n.put("visibleAt", t.visibleAt().toString());
            n.put("partition", t.partition());
            n.put("txn", t.txn());
            n.put("messageId", t.messageId().toString());
            n.put("attempts", t.attempts());
            n.put("lastError", t.lastError());
            n.put("payloadBytes", t.payloadBytes());
            n.put("encrypted", t.encrypted());
            n.put("producerSub", t.producerSub());
            n.put("claimedUntil", t.claimedUntil() == null ? null : t.claimedUntil().toString());
            n.set("recurring", t.recurring() == null ? null : JSON.valueToTree(t.recurring().fields(t.deliverAt())));
        }
        // the cursor is the page's last key, opaque to the caller (base64url): a key may hold any character
        body.put("nextCursor", page.size() == limit
                ? Base64.getUrlEncoder().withoutPadding().encodeToString(page.get(page.size() - 1).timerKey().getBytes(StandardCharsets.UTF_8))
                : null);
        return new Reply(200, body);
    }

    /** GET /api/v1/timers/{queue}/{timerKey}?next=N: one pending timer with its payload; a series with its next N occurrences. */
    private Reply peek(UUID tenant, String queue, String timerKey, Map<String, String> query) throws Answer, SQLException {
        int next = intParam(query, "next", 5, 1, MAX_NEXT);
        Optional<TimerView> found = timers.peek(tenant, queue, timerKey);
        if (found.isEmpty()) {
            throw new Answer(Problem.absent("not pending: never scheduled, cancelled, or already fired (GET " + TIMERS_FIND
                    + "?queue=...&txn=... asks the log)"));
        }
        TimerView t = found.get();
        ObjectNode n = JSON.createObjectNode();
        n.put("queue", t.queue());
        n.put("timerKey", t.timerKey());
        n.put("state", t.state().name().toLowerCase(Locale.ROOT));
        n.put("partition", t.partition());
        n.put("deliverAt", t.deliverAt().toString());
        n.put("visibleAt", t.visibleAt().toString());
        n.put("txn", t.txn());
        n.put("messageId", t.messageId().toString());
        n.put("attempts", t.attempts());
        n.put("lastError", t.lastError());
        n.put("claimedUntil", t.claimedUntil() == null ? null : t.claimedUntil().toString());
        n.put("producerSub", t.producerSub());
        n.put("encrypted", t.encrypted());
        n.put("dbNow", t.dbNow().toString());
        // the payload as the producer sent it: JSON when it is; an encrypted or non-JSON payload as base64 (never decrypted here)
        try {
            byte[] bytes = t.payloadBytes(Frame.MAX_PAYLOAD_BYTES);
            JsonNode json = t.encrypted() ? null : parse(bytes);
            if (json != null) {
                n.set("payload", json);
            } else {
                n.put("payloadBase64", Base64.getEncoder().encodeToString(bytes));
            }
        } catch (CodecException e) {
            n.put("payloadError", "a zstd payload that does not decompress: " + e.getMessage());
        }
        if (t.recurring() != null) {
            ObjectNode r = JSON.valueToTree(t.recurring().fields(t.deliverAt()));
            ArrayNode upcoming = r.putArray("nextOccurrences");
            t.recurring().upcoming(t.deliverAt(), next).forEach(i -> upcoming.add(i.toString()));
            n.set("recurring", r);
        } else {
            n.putNull("recurring");
        }
        return new Reply(200, n);
    }

    /** GET /api/v1/timers:find?queue=&txn=: where the txn is in the queue's log, and the pending series scheduled with it. */
    private Reply find(UUID tenant, Map<String, String> query) throws Answer, SQLException {
        String queue = required(query, "queue");
        String txn = required(query, "txn");
        TimerInspector.Finding f = timers.find(tenant, queue, txn);
        ObjectNode body = JSON.createObjectNode();
        body.put("queue", queue);
        body.put("txn", txn);
        body.put("found", f.found());
        ArrayNode hits = body.putArray("hits");
        for (TxnHit h : f.hits()) {
            hits.addObject().put("partition", h.partition()).put("offset", h.offset()).put("messageId", h.messageId().toString())
                    .put("createdAt", h.createdAt().toString());
        }
        ArrayNode series = body.putArray("series");
        for (PendingSeries s : f.series()) {
            ObjectNode n = series.addObject().put("timerKey", s.timerKey()).put("state", s.state().name().toLowerCase(Locale.ROOT))
                    .put("txn", s.txn());
            n.setAll((ObjectNode) JSON.valueToTree(s.recurring().fields(s.nextOccurrence())));
        }
        return new Reply(200, body); // found or not, an answer: `found` says which
    }

    /** GET /api/v1/offsets?group=: the bridge's stored offsets of the caller's tenant's command topics, with the broker's range. */
    private Reply offsets(UUID tenant, Map<String, String> query) throws SQLException {
        Set<String> own = offsets.topicsOf(tenant);
        List<StoredOffsets.Stored> stored = offsets.read(query.get("group"), null).stream().filter(s -> own.contains(s.topic())).toList();
        List<StoredOffsets.Row> rows;
        String warning = null;
        try {
            rows = ranges.rows(stored); // the broker's range is asked fresh, through the process's one Admin client
        } catch (KafkaException e) {
            rows = StoredOffsets.alone(stored);
            warning = "the broker's log start and end are not shown: " + e.getClass().getSimpleName();
        }
        ObjectNode body = JSON.createObjectNode();
        ArrayNode out = body.putArray("offsets");
        rows.forEach(r -> out.add(JSON.valueToTree(r.fields())));
        body.put("warning", warning);
        return new Reply(200, body);
    }

    /** A dead letter the caller's tenant may see; another tenant's is answered as one that does not exist. */
    private DeadLetters.Letter letter(UUID tenant, String rawId) throws Answer, SQLException {
        UUID id;
        try {
            id = UUID.fromString(Operations.decode(rawId));
        } catch (IllegalArgumentException | Operations.Refusal e) {
            throw new Answer(Problem.absent("no dead letter " + rawId.replaceAll("[^A-Za-z0-9-]", "?")));
        }
        Optional<DeadLetters.Letter> l = letters.one(id);
        if (l.isEmpty() || !l.get().tenant().equals(tenant)) {
            throw new Answer(Problem.absent("no dead letter " + id));
        }
        return l.get();
    }

    /** DELETE /api/v1/dead-letters/{id}?reason=: gives it up, with a dead_letter_removed audit event carrying the reason. */
    private Reply drop(CommandTopics.Target caller, DeadLetters.Letter l, Map<String, String> query) throws Answer, SQLException {
        String reason = reason(query);
        DeadLetters.Removed r = shared(() -> letters.remove(l.id(), "dropped", reason, null, null, null, null, clientLabel(caller, "drop")));
        ObjectNode body = JSON.createObjectNode();
        body.put("id", l.id().toString());
        body.put("queue", r.queue());
        body.put("timerKey", r.timerKey());
        body.put("reason", reason);
        body.put("removed", true);
        return new Reply(200, body);
    }

    /**
     * POST /api/v1/dead-letters/{id}/replay?reason=&delayMs=: the CLI's replay (DeadLetters), its command written to the
     * caller's command topic by the API's sender and answered with its verdict; 200 once the database removed the dead
     * letter, 202 when no verdict came in time and 422 on a refusal (the dead letter is kept; a second call sends nothing
     * twice when the timer is already staged or fired).
     */
    private Reply replay(CommandTopics.Target caller, DeadLetters.Letter l, Map<String, String> query) throws Answer, SQLException {
        String reason = reason(query);
        long delayMs = intParam(query, "delayMs", 0, 0, Integer.MAX_VALUE);
        // key: for a dead letter whose key was not recorded (no queen.timer_dlq_keys row), from its dead_lettered event
        DeadLetters.Replay plan = shared(() -> letters.replay(l, query.get("key"), "the query parameter key"));
        // the API writes only to its own topic of the caller's tenant; the database must know it as that tenant's
        String topic = shared(() -> letters.commandTopic(l.id(), l.tenant(), caller.topic(), "api.command.topics"));
        ObjectNode body = JSON.valueToTree(l.fields());
        UUID verdictEvent = null;
        TraceParent trace = null;
        if (plan.already() == null) {
            trace = TraceParent.of(hex(16), hex(8));
            Optional<List<CommandSender.Answer>> answers = senders.get(topic).sendAll(
                    List.of(plan.command(Duration.ofMillis(delayMs), trace, caller.token()).envelope(topic)), verdictTimeout);
            if (answers.isEmpty()) {
                throw new Answer(Problem.tenantBusy());
            }
            CommandSender.Answer a = answers.get().get(0);
            ObjectNode v = body.putObject("verdict").put("index", 0);
            VerdictJson.write(v, a);
            body.put("traceId", trace.traceId());
            if (a.verdict().isEmpty()) {
                body.put("removed", false);
                return new Reply(202, body); // written; the dead letter stays until a replay sees the timer back
            }
            AuditEvent.Verdict verdict = a.verdict().get();
            if (!(verdict instanceof AuditEvent.Scheduled || verdict instanceof AuditEvent.Rescheduled)) {
                body.put("removed", false);
                return new Reply(422, body);
            }
            verdictEvent = verdict.meta().eventId();
        } else {
            body.put("already", plan.already());
        }
        UUID event = verdictEvent;
        TraceParent t = trace;
        DeadLetters.Removed r = shared(() -> letters.remove(l.id(), "replayed", reason, plan.timerKey(), l.txn(), event, t,
                clientLabel(caller, "replay")));
        body.put("state", r.state());
        body.put("removed", true);
        return new Reply(200, body);
    }

    private interface Step<T> {
        T run() throws SQLException;
    }

    /** The shared refusals as problems: gone 404, refused 409, a bad argument 400. */
    private static <T> T shared(Step<T> step) throws Answer, SQLException {
        try {
            return step.run();
        } catch (DeadLetters.Refused r) {
            throw new Answer(switch (r.kind) {
                case NOT_FOUND -> Problem.absent(r.getMessage());
                case CONFLICT -> Problem.conflict(r.getMessage());
                case INVALID -> Problem.badRequest(r.getMessage());
            });
        }
    }

    /** Who called, as the database records it beside its own session user. */
    private static String clientLabel(CommandTopics.Target caller, String command) {
        return (caller.caller() == null ? "anonymous" : caller.caller()) + " (queen-timers http dead-letters " + command + ")";
    }

    private static String reason(Map<String, String> query) throws Answer {
        String reason = query.get("reason");
        if (reason == null || reason.isBlank()) {
            throw new Answer(Problem.badRequest("reason must say why (it is written into the dead_letter_removed audit event)"));
        }
        return reason;
    }

    private static String required(Map<String, String> query, String name) throws Answer {
        String v = query.get(name);
        if (v == null || v.isEmpty()) {
            throw new Answer(Problem.badRequest("the query parameter " + name + " is required"));
        }
        return v;
    }

    private static int limit(Map<String, String> query, int max) throws Answer {
        return intParam(query, "limit", Math.min(DEFAULT_LIMIT, max), 1, max);
    }

    private static int intParam(Map<String, String> query, String name, int dflt, int min, int max) throws Answer {
        String v = query.get(name);
        if (v == null) {
            return dflt;
        }
        try {
            int n = Integer.parseInt(v);
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        throw new Answer(Problem.badRequest(name + " must be a whole number in " + min + ".." + max));
    }

    /** The query string's parameters, each percent-decoded once as UTF-8 ('+' is a space, as forms send it); a repeated one is a 400. */
    public static Map<String, String> query(String raw) throws Answer {
        Map<String, String> out = new HashMap<>();
        if (raw == null || raw.isEmpty()) {
            return out;
        }
        for (String pair : raw.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            try {
                String k = Operations.decode((eq < 0 ? pair : pair.substring(0, eq)).replace('+', ' '));
                String v = eq < 0 ? "" : Operations.decode(pair.substring(eq + 1).replace('+', ' '));
                if (out.put(k, v) != null) {
                    throw new Answer(Problem.badRequest("the query parameter " + k + " is given twice"));
                }
            } catch (Operations.Refusal r) {
                throw new Answer(r.problem);
            }
        }
        return out;
    }

    private static JsonNode parse(byte[] bytes) {
        try {
            return JSON.readTree(bytes);
        } catch (java.io.IOException e) {
            return null;
        }
    }

    private static String hex(int bytes) {
        byte[] b = new byte[bytes];
        RANDOM.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }
}
