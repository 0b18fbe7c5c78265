package io.queen.timers.http.console;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.timers.core.health.Health;
import io.queen.timers.http.api.ApiServer;
import io.queen.timers.http.api.CrossSite;
import io.queen.timers.http.api.Exchange;
import io.queen.timers.http.api.ReadRoutes;
import io.queen.timers.http.route.CommandTopics;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.sql.SQLException;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The web console (api.console.enabled, docs/http-api.md#console): server-rendered pages under {@code /console} drawn
 * from the operator read routes' own replies ({@link ReadRoutes#handle}, the JSON routes' code: the same reads, tenancy
 * and admin check), and two forms, Replay and Drop, that call those routes' replay and drop (a replay is a command on
 * the caller's command topic, answered by the bridge's verdict; no second write path). No script on any page.
 *
 * <p>Who calls: as on the JSON routes, the topic without auth, or a token with the admin claim, which a browser keeps in
 * an HttpOnly, SameSite=Strict cookie set by the login form (also taken from an Authorization header). Forged posts:
 * a browser's cross-site POST is refused by its Sec-Fetch-Site or Origin ({@link CrossSite}), and every form carries its
 * session's token in a hidden field, checked on every POST. A session is a random id in its own HttpOnly,
 * SameSite=Strict cookie, given to a browser on its first page and replaced at sign-in and sign-out; its token is the
 * HMAC-SHA256 of the id under a key this process draws at start, so no session table is kept and one session's token
 * is refused for any other. A page of another site can neither read a token (same-origin policy) nor send the cookies
 * (SameSite=Strict). Cookies are marked Secure over TLS (api.cookies.secure). PRICE: a restart invalidates open forms
 * (the key is new: the operator reloads the page); and with the topic without auth a session's token is all that stops
 * a forged replay from a browser that skips the cross-site headers, so serve the console to operators' networks only.
 */
public final class Console {

    public static final String ROOT = "/console";
    public static final String COOKIE = "queen_console";
    /** The session's cookie: a random id its forms' token is bound to. */
    public static final String SESSION_COOKIE = "queen_console_session";
    public static final int MAX_FORM_BYTES = 16 * 1024;
    /** Timers on one page of a queue. */
    static final int PAGE = 50;
    /** Next occurrences shown for a series. */
    static final int NEXT = 3;
    /** A JWT (base64url parts and dots): nothing else is ever put into the cookie. */
    private static final Pattern TOKEN = Pattern.compile("[A-Za-z0-9._~+/=-]{1,8192}");
    /** A session id as this console mints them: 32 random bytes, base64url without padding. */
    private static final Pattern SESSION = Pattern.compile("[A-Za-z0-9_-]{43}");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final SecureRandom RANDOM = new SecureRandom();

    private final ReadRoutes reads;
    private final CommandTopics topics;
    private final Supplier<Health.Report> health;
    private final boolean tls;
    private final String secureCookies;
    private final SecretKeySpec key;

    /** One request for a page or a form, checked and its caller known; drawn by a worker ({@link #draw}). */
    public record Page(CommandTopics.Target caller, String path, boolean post, Map<String, String> params, String csrf) {}

    /**
     * @param health        the process's readiness (its ServiceHost's); null when it runs without one
     * @param tls           the API port serves TLS
     * @param secureCookies api.cookies.secure: auto (Secure over TLS, here or at a proxy that says so), always, never
     */
    public Console(ReadRoutes reads, CommandTopics topics, Health health, boolean tls, String secureCookies) {
        this.reads = reads;
        this.topics = topics;
        this.health = health == null ? null : health::report;
        this.tls = tls;
        this.secureCookies = secureCookies;
        byte[] b = new byte[32];
        RANDOM.nextBytes(b);
        this.key = new SecretKeySpec(b, "HmacSHA256");
    }

    public static boolean owns(String path) {
        return path.equals(ROOT) || path.startsWith(ROOT + "/");
    }

    /** Before a form's body is read: a POST that is cross-site or not this console's form type is refused here (true). */
    public boolean refusedBeforeForm(Exchange ex) {
        Optional<String> crossSite = CrossSite.refusal(ex.method(), ex::header);
        if (crossSite.isPresent()) {
            error(ex, 403, crossSite.get(), null);
            return true;
        }
        String type = ex.header("Content-Type");
        if (type == null || !type.toLowerCase(Locale.ROOT).split(";")[0].trim().equals("application/x-www-form-urlencoded")) {
            error(ex, 415, "the console takes its own forms only", null);
            return true;
        }
        return false;
    }

    /** A form whose body was refused: 413 past {@link #MAX_FORM_BYTES}, 408 past api.request.timeout. */
    public void formRefused(Exchange ex, int status) {
        error(ex, status, status == 413 ? "a form of more than " + MAX_FORM_BYTES + " bytes" : "the form did not arrive in time", null);
    }

    /** The posted form's fields; null when refused (answered here). */
    public Map<String, String> form(Exchange ex, byte[] body) {
        try {
            return new LinkedHashMap<>(ReadRoutes.query(new String(body, StandardCharsets.US_ASCII)));
        } catch (ReadRoutes.Answer a) {
            error(ex, 400, a.problem.detail(), null);
            return null;
        }
    }

    /**
     * What needs no worker: the method, the form's session token, sign-in and sign-out, and the caller. Answered here
     * (empty), or the page to draw with its caller, whose tenant's share the server takes before a worker draws it.
     *
     * @param form the posted form's fields; null for a GET
     */
    public Optional<Page> accept(Exchange ex, Map<String, String> form) {
        String path = ex.path();
        String method = ex.method();
        boolean post = form != null;
        if (!post && !method.equals("GET")) {
            ex.setHeader("Allow", "GET, POST");
            error(ex, 405, method + " is not served by the console", null);
            return Optional.empty();
        }
        Map<String, String> q;
        if (post) {
            String session = cookie(ex, SESSION_COOKIE);
            if (session == null || !SESSION.matcher(session).matches() || !MessageDigest.isEqual(
                    form.getOrDefault("csrf", "").getBytes(StandardCharsets.UTF_8), csrf(session).getBytes(StandardCharsets.UTF_8))) {
                error(ex, 403, "this form is not one this console served to this browser's session (or the server restarted"
                        + " since): reload the page and send it again", null);
                return Optional.empty();
            }
            q = form;
        } else {
            try {
                q = ReadRoutes.query(ex.rawQuery());
            } catch (ReadRoutes.Answer a) {
                error(ex, 400, a.problem.detail(), null);
                return Optional.empty();
            }
        }
        if (path.equals(ROOT + "/login")) {
            login(ex, post, q);
            return Optional.empty();
        }
        if (path.equals(ROOT + "/logout") && post) {
            ex.addHeader("Set-Cookie", cookie(ex, COOKIE, "", 0));
            ex.addHeader("Set-Cookie", cookie(ex, SESSION_COOKIE, "", 0)); // the next page starts a new session
            redirect(ex, ROOT + "/login");
            return Optional.empty();
        }
        String csrf = csrf(session(ex));
        CommandTopics.Target caller;
        try {
            caller = topics.resolve(token(ex), System.currentTimeMillis());
        } catch (CommandTopics.Refused r) {
            send(ex, 401, loginPage(r.getMessage(), csrf));
            return Optional.empty();
        }
        return Optional.of(new Page(caller, path, post, q, csrf));
    }

    /** Draws {@code p}, on a worker: the reads it shows, or the replay or drop it asks. */
    public void draw(Exchange ex, Page p) {
        String path = p.path();
        try {
            switch (p.post() ? "POST " + path : path) {
                case ROOT, ROOT + "/" -> overview(ex, p);
                case ROOT + "/queue" -> queue(ex, p);
                case ROOT + "/timer" -> timer(ex, p);
                case ROOT + "/dead-letters" -> deadLetters(ex, p);
                case "POST " + ROOT + "/dead-letters/replay" -> act(ex, p, true);
                case "POST " + ROOT + "/dead-letters/drop" -> act(ex, p, false);
                default -> error(ex, 404, "no such console page", p);
            }
        } catch (ReadRoutes.Answer a) {
            error(ex, a.problem.status(), a.problem.detail(), p);
        } catch (SQLException e) {
            error(ex, 503, "the database did not answer; retry", p);
        } catch (IOException e) {
            error(ex, 500, "the page could not be drawn", p); // a JSON reply that does not print: not expected
        }
    }

    /** The caller's tenant already has its share of the server in progress (api.senders): 429, nothing read. */
    public void busy(Exchange ex, Page p) {
        error(ex, 429, "your tenant already has api.senders requests in progress, its share of the server: nothing was read or"
                + " changed; reload in a moment", p);
    }

    private void overview(Exchange ex, Page p) throws ReadRoutes.Answer, SQLException, IOException {
        CommandTopics.Target caller = p.caller();
        StringBuilder b = new StringBuilder();
        b.append("<h2>Health</h2>");
        if (health == null) {
            b.append("<p class=\"note\">This process runs without a service host: no readiness to show.</p>");
        } else {
            Health.Report r = health.get();
            b.append("<p>Readiness: <span id=\"readiness\" class=\"").append(r.ready() ? "ok\">ready" : "bad\">not ready").append("</span></p>");
            b.append("<table><tr><th>check</th><th>state</th></tr>");
            for (Health.Line l : r.lines()) {
                b.append("<tr><td>").append(Html.text(l.name())).append("</td><td>").append(l.problem()
                        .map(why -> "<span class=\"bad\">" + Html.text(Health.redact(why)) + "</span>").orElse("<span class=\"ok\">ok</span>"))
                        .append("</td></tr>");
            }
            b.append("</table>");
        }
        b.append("<h2>Open a queue</h2>").append(queueForm(""));

        JsonNode letters = get(caller, ReadRoutes.DEAD_LETTERS, Map.of("limit", "1000")).get("deadLetters");
        Map<String, Integer> byQueue = new TreeMap<>();
        letters.forEach(l -> byQueue.merge(l.path("queue").asText(), 1, Integer::sum));
        b.append("<h2>Dead letters</h2><p><a id=\"dead-letters-count\" href=\"").append(ROOT).append("/dead-letters\">")
                .append(letters.size() >= 1000 ? "1000 or more" : String.valueOf(letters.size())).append(" dead letters</a></p>");
        if (!byQueue.isEmpty()) {
            b.append("<table><tr><th>queue</th><th>dead letters</th></tr>");
            byQueue.forEach((queue, n) -> b.append("<tr><td><a href=\"").append(Html.text(ROOT + "/queue?name=" + Html.url(queue))).append("\">")
                    .append(Html.text(queue)).append("</a></td><td><a href=\"").append(Html.text(ROOT + "/dead-letters?queue=" + Html.url(queue)))
                    .append("\">").append(n).append("</a></td></tr>"));
            b.append("</table>");
        }

        b.append("<h2>Lag</h2><p class=\"note\">The bridge's stored offsets of this tenant's command topics against the broker's log end.</p>");
        JsonNode offsets = get(caller, ReadRoutes.OFFSETS, Map.of());
        b.append(table(offsets.get("offsets"), List.of("group", "topic", "partition", "stored", "logEnd", "lag", "inRange"), null));
        if (!offsets.path("warning").isNull() && !offsets.path("warning").isMissingNode()) {
            b.append("<p class=\"bad\">").append(Html.text(offsets.get("warning").asText())).append("</p>");
        }
        send(ex, 200, Html.page("Overview", nav(p), b.toString()));
    }

    private void queue(Exchange ex, Page p) throws ReadRoutes.Answer, SQLException, IOException {
        CommandTopics.Target caller = p.caller();
        Map<String, String> q = p.params();
        String name = q.getOrDefault("name", "");
        if (name.isEmpty()) {
            send(ex, 200, Html.page("Open a queue", nav(p), queueForm("")));
            return;
        }
        Map<String, String> params = new HashMap<>(Map.of("queue", name, "limit", String.valueOf(PAGE)));
        if (q.get("cursor") != null) {
            params.put("cursor", q.get("cursor"));
        }
        JsonNode page = get(caller, ApiServer.TIMERS, params);
        StringBuilder b = new StringBuilder(queueForm(name));
        b.append("<p><a href=\"").append(Html.text(ROOT + "/dead-letters?queue=" + Html.url(name))).append("\">this queue's dead letters</a></p>");
        JsonNode timers = page.get("timers");
        if (timers.isEmpty()) {
            b.append("<p id=\"empty\" class=\"note\">No timer of this queue is pending.</p>");
        } else {
            b.append("<table id=\"timers\"><tr><th>timer key</th><th>state</th><th>due</th><th>txn</th><th>attempts</th><th>last error</th>"
                    + "<th>payload bytes</th><th>series: rule and next occurrences</th></tr>");
            for (JsonNode t : timers) {
                String key = t.get("timerKey").asText();
                b.append("<tr class=\"timer\"><td><a href=\"").append(Html.text(timerLink(name, key, t.path("txn").asText(null)))).append("\">")
                        .append(Html.text(key)).append("</a></td><td>").append(Html.text(t.path("state").asText())).append("</td><td>")
                        .append(Html.text(t.path("deliverAt").asText())).append("</td><td>").append(value(t.get("txn"))).append("</td><td>")
                        .append(t.path("attempts").asInt()).append("</td><td>").append(value(t.get("lastError"))).append("</td><td>")
                        .append(t.path("payloadBytes").asInt()).append("</td><td>");
                if (t.path("recurring").isObject()) {
                    // PRICE: one peek per series on the page (its next occurrences are computed from its rule there)
                    JsonNode r = get(caller, timerPath(name, key), Map.of("next", String.valueOf(NEXT))).path("recurring");
                    b.append("<code>").append(Html.text(r.path("rule").asText())).append("</code><ul>");
                    r.path("nextOccurrences").forEach(n -> b.append("<li>").append(Html.text(n.asText())).append("</li>"));
                    b.append("</ul>");
                }
                b.append("</td></tr>");
            }
            b.append("</table>");
        }
        if (!page.path("nextCursor").isNull()) {
            b.append("<p><a href=\"").append(Html.text(ROOT + "/queue?name=" + Html.url(name) + "&cursor=" + Html.url(page.get("nextCursor").asText())))
                    .append("\">next page</a></p>");
        }
        send(ex, 200, Html.page("Queue " + name, nav(p), b.toString()));
    }

    private void timer(Exchange ex, Page p) throws ReadRoutes.Answer, SQLException, IOException {
        CommandTopics.Target caller = p.caller();
        Map<String, String> q = p.params();
        String queue = q.getOrDefault("queue", "");
        String key = q.getOrDefault("key", "");
        if (queue.isEmpty() || key.isEmpty()) {
            error(ex, 400, "queue and key are required", p);
            return;
        }
        StringBuilder b = new StringBuilder();
        String txn = q.get("txn");
        b.append("<p>Queue <a href=\"").append(Html.text(ROOT + "/queue?name=" + Html.url(queue))).append("\">").append(Html.text(queue))
                .append("</a></p>");
        JsonNode t;
        try {
            t = get(caller, timerPath(queue, key), Map.of("next", "5"));
        } catch (ReadRoutes.Answer a) {
            if (a.problem.status() != 404) {
                throw a;
            }
            t = null;
        }
        if (t == null) {
            b.append("<p id=\"state\" class=\"note\">Not pending: never scheduled, cancelled, or already fired (the log below says"
                    + " which, by its txn).</p>");
        } else {
            txn = t.path("txn").asText(txn);
            b.append("<h2>Pending</h2><table id=\"pending\">");
            for (String f : List.of("state", "partition", "deliverAt", "visibleAt", "txn", "messageId", "attempts", "lastError",
                    "claimedUntil", "producerSub", "encrypted", "dbNow")) {
                b.append("<tr><th>").append(f).append("</th><td>").append(value(t.get(f))).append("</td></tr>");
            }
            String payload = t.has("payload") ? JSON.writerWithDefaultPrettyPrinter().writeValueAsString(t.get("payload"))
                    : t.has("payloadBase64") ? t.get("payloadBase64").asText() : t.path("payloadError").asText("");
            String kind = t.has("payload") ? "JSON" : t.has("payloadBase64") ? "base64" : "unreadable";
            b.append("<tr><th>payload</th><td>").append(payloadBytes(t)).append(" bytes, shown as ").append(kind).append("</td></tr></table>");
            b.append("<pre id=\"payload\">").append(Html.text(payload)).append("</pre>");
            if (t.path("recurring").isObject()) {
                JsonNode r = t.get("recurring");
                b.append("<h2>Series</h2><p>Rule <code>").append(Html.text(r.path("rule").asText())).append("</code>, series txn <code>")
                        .append(Html.text(r.path("seriesTxn").asText())).append("</code>, occurrence ").append(r.path("seq").asLong())
                        .append("</p><ol id=\"next\">");
                r.path("nextOccurrences").forEach(n -> b.append("<li>").append(Html.text(n.asText())).append("</li>"));
                b.append("</ol>");
            }
        }
        b.append("<h2>In the log</h2>");
        if (txn == null || txn.isEmpty()) {
            b.append("<p class=\"note\">No txn known for this timer: open it from its queue's page while it is pending to follow it.</p>");
        } else {
            JsonNode f = get(caller, ReadRoutes.TIMERS_FIND, Map.of("queue", queue, "txn", txn));
            if (f.path("hits").isEmpty()) {
                b.append("<p id=\"fired\" class=\"note\">Txn <code>").append(Html.text(txn)).append("</code> is not in the queue's log yet.</p>");
            } else {
                b.append("<p id=\"fired\" class=\"ok\">Fired: txn <code>").append(Html.text(txn)).append("</code> is in the log.</p>");
                b.append(table(f.get("hits"), List.of("partition", "offset", "messageId", "createdAt"), "hits"));
            }
            b.append("<p class=\"note\">Trace ids are not recorded by these reads; the timer's audit events carry them.</p>");
        }
        send(ex, 200, Html.page("Timer " + key, nav(p), b.toString()));
    }

    private void deadLetters(Exchange ex, Page p) throws ReadRoutes.Answer, SQLException, IOException {
        CommandTopics.Target caller = p.caller();
        Map<String, String> q = p.params();
        String queue = q.get("queue");
        Map<String, String> params = new HashMap<>(Map.of("limit", "1000"));
        if (queue != null && !queue.isEmpty()) {
            params.put("queue", queue);
        }
        JsonNode letters = get(caller, ReadRoutes.DEAD_LETTERS, params).get("deadLetters");
        StringBuilder b = new StringBuilder();
        if (letters.isEmpty()) {
            b.append("<p id=\"empty\" class=\"note\">No dead letters").append(queue == null ? "" : " in " + Html.text(queue)).append(".</p>");
        } else {
            b.append("<p class=\"note\">Replay writes a schedule command to your command topic (the bridge's verdict decides);"
                    + " Drop gives the dead letter up. Each asks a reason, written into its dead_letter_removed audit event.</p>");
            b.append("<table id=\"dead-letters\"><tr><th>queue</th><th>timer key</th><th>txn</th><th>error</th><th>attempts</th>"
                    + "<th>failed at</th><th>replay</th><th>drop</th></tr>");
            for (JsonNode l : letters) {
                String id = l.get("id").asText();
                b.append("<tr class=\"dead-letter\"><td>").append(Html.text(l.path("queue").asText())).append("</td><td>")
                        .append(value(l.get("timerKey"))).append("</td><td>").append(value(l.get("txn"))).append("</td><td>")
                        .append(value(l.get("error"))).append("</td><td>").append(l.path("attempts").asInt()).append("</td><td>")
                        .append(Html.text(l.path("failedAt").asText())).append("</td><td>")
                        .append(actionForm(p, "replay", id, "<input type=\"text\" name=\"delayMs\" size=\"7\" placeholder=\"delay ms\">", "Replay"))
                        .append("</td><td>").append(actionForm(p, "drop", id, "", "Drop")).append("</td></tr>");
            }
            b.append("</table>");
        }
        send(ex, 200, Html.page(queue == null ? "Dead letters" : "Dead letters of " + queue, nav(p), b.toString()));
    }

    /** POST replay or drop: the JSON routes' replay and drop, the outcome drawn as a page. */
    private void act(Exchange ex, Page p, boolean replay) throws ReadRoutes.Answer, SQLException, IOException {
        CommandTopics.Target caller = p.caller();
        Map<String, String> form = p.params();
        String id = form.getOrDefault("id", "");
        Map<String, String> params = new HashMap<>();
        params.put("reason", form.getOrDefault("reason", ""));
        String delay = form.getOrDefault("delayMs", "").trim();
        if (replay && !delay.isEmpty()) {
            params.put("delayMs", delay);
        }
        String path = ReadRoutes.DEAD_LETTERS + "/" + segment(id);
        ReadRoutes.Reply r = reads.handle(caller, replay ? "POST" : "DELETE", replay ? path + "/replay" : path, params);
        JsonNode body = r.body();
        StringBuilder b = new StringBuilder("<div class=\"msg\" id=\"outcome\">");
        String key = body.path("timerKey").asText();
        if (!replay) {
            b.append("Dropped the dead letter of <code>").append(Html.text(key)).append("</code>.");
        } else if (r.status() == 200) {
            b.append("Replayed <code>").append(Html.text(key)).append("</code>: ")
                    .append(body.has("already") ? "already " + Html.text(body.get("already").asText())
                            : "verdict " + Html.text(body.path("verdict").path("type").asText()))
                    .append(", now ").append(Html.text(body.path("state").asText())).append(". The dead letter is removed.");
        } else if (r.status() == 202) {
            b.append("Replay of <code>").append(Html.text(key)).append("</code> written; no verdict yet. The dead letter stays until the"
                    + " timer is seen staged again.");
        } else {
            b.append("Replay of <code>").append(Html.text(key)).append("</code> refused: ")
                    .append(Html.text(body.path("verdict").path("reason").asText(body.path("verdict").path("type").asText())))
                    .append(". The dead letter is kept.");
        }
        if (body.has("traceId")) {
            b.append(" Trace id <code id=\"trace\">").append(Html.text(body.get("traceId").asText())).append("</code>.");
        }
        b.append("</div><p><a id=\"back\" href=\"").append(ROOT).append("/dead-letters\">back to the dead letters</a></p>");
        send(ex, r.status() == 422 ? 422 : 200, Html.page(replay ? "Replay" : "Drop", nav(p), b.toString()));
    }

    private void login(Exchange ex, boolean post, Map<String, String> form) {
        String csrf = csrf(session(ex));
        if (!post) {
            send(ex, 200, loginPage(null, csrf));
            return;
        }
        String token = form.getOrDefault("token", "").trim();
        if (!TOKEN.matcher(token).matches()) {
            send(ex, 401, loginPage("paste a token (a JWT)", csrf));
            return;
        }
        try {
            topics.resolve(token, System.currentTimeMillis()); // refused here rather than on every page
        } catch (CommandTopics.Refused r) {
            send(ex, 401, loginPage(r.getMessage(), csrf));
            return;
        }
        ex.addHeader("Set-Cookie", cookie(ex, COOKIE, token, -1));
        // a new session at sign-in: a session id planted in this browser before (by whoever could set its cookies) is worth nothing after
        ex.addHeader("Set-Cookie", cookie(ex, SESSION_COOKIE, newSession(), -1));
        redirect(ex, ROOT);
    }

    private String loginPage(String problem, String csrf) {
        return Html.page("Sign in", "", (problem == null ? "" : "<p class=\"bad\">" + Html.text(problem) + "</p>")
                + "<p class=\"note\">A token with the admin claim (auth.admin.claim) of your tenant's command topic. It is kept in an"
                + " HttpOnly cookie of this path until you sign out or close the browser.</p>"
                + "<form method=\"post\" action=\"" + ROOT + "/login\">" + hidden(csrf) + "<input type=\"text\" name=\"token\" size=\"60\""
                + " autocomplete=\"off\"> <button type=\"submit\">Sign in</button></form>");
    }

    private String nav(Page p) {
        CommandTopics.Target caller = p.caller();
        return "<a href=\"" + ROOT + "/dead-letters\">Dead letters</a><span class=\"note\" style=\"color:#c9ced8\">tenant "
                + Html.text(caller.tenant()) + " · topic " + Html.text(caller.topic())
                + (caller.caller() == null ? "" : " · " + Html.text(caller.caller())) + "</span>"
                + (caller.token() == null ? "" : "<form class=\"inline\" method=\"post\" action=\"" + ROOT + "/logout\">" + hidden(p.csrf())
                        + "<button type=\"submit\">Sign out</button></form>");
    }

    private String queueForm(String name) {
        return "<form method=\"get\" action=\"" + ROOT + "/queue\"><input type=\"text\" name=\"name\" value=\"" + Html.text(name)
                + "\" placeholder=\"queue\"> <button type=\"submit\" id=\"open-queue\">Open</button></form>";
    }

    private String actionForm(Page p, String action, String id, String extra, String label) {
        return "<form class=\"inline\" method=\"post\" action=\"" + ROOT + "/dead-letters/" + action + "\">" + hidden(p.csrf())
                + "<input type=\"hidden\" name=\"id\" value=\"" + Html.text(id) + "\"><input type=\"text\" name=\"reason\" size=\"14\""
                + " placeholder=\"reason\" required> " + extra + " <button type=\"submit\" class=\"" + action + "\">" + label + "</button></form>";
    }

    private static String hidden(String csrf) {
        return "<input type=\"hidden\" name=\"csrf\" value=\"" + csrf + "\">";
    }

    /** The JSON route's reply to GET {@code path}: 200 or its problem as an {@link ReadRoutes.Answer}. */
    private JsonNode get(CommandTopics.Target caller, String path, Map<String, String> params) throws ReadRoutes.Answer, SQLException {
        return reads.handle(caller, "GET", path, params).body();
    }

    private static String timerPath(String queue, String key) {
        return ApiServer.TIMERS + "/" + segment(queue) + "/" + segment(key);
    }

    private static String timerLink(String queue, String key, String txn) {
        return ROOT + "/timer?queue=" + Html.url(queue) + "&key=" + Html.url(key) + (txn == null ? "" : "&txn=" + Html.url(txn));
    }

    /** One path segment as the JSON routes decode it (RFC 3986: a space is %20, a slash %2F). */
    private static String segment(String s) {
        return Html.url(s).replace("+", "%20");
    }

    private static String table(JsonNode rows, List<String> columns, String id) {
        if (rows == null || rows.isEmpty()) {
            return "<p class=\"note\">None.</p>";
        }
        StringBuilder b = new StringBuilder(id == null ? "<table>" : "<table id=\"" + id + "\">").append("<tr>");
        columns.forEach(c -> b.append("<th>").append(Html.text(c)).append("</th>"));
        b.append("</tr>");
        for (JsonNode r : rows) {
            b.append("<tr>");
            columns.forEach(c -> b.append("<td>").append(value(r.get(c))).append("</td>"));
            b.append("</tr>");
        }
        return b.append("</table>").toString();
    }

    private static String value(JsonNode n) {
        return n == null || n.isNull() ? "<span class=\"note\">—</span>" : Html.text(n.isValueNode() ? n.asText() : n.toString());
    }

    private static int payloadBytes(JsonNode t) {
        if (t.has("payloadBase64")) {
            return java.util.Base64.getDecoder().decode(t.get("payloadBase64").asText()).length;
        }
        return t.has("payload") ? t.get("payload").toString().getBytes(StandardCharsets.UTF_8).length : 0;
    }

    /** The bearer: the console's cookie, else an Authorization header (as the JSON routes take it); null for neither. */
    private static String token(Exchange ex) {
        String auth = ex.header("Authorization");
        if (auth != null && auth.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return auth.substring(7).trim();
        }
        return cookie(ex, COOKIE);
    }

    /** The value of the request's cookie {@code name}; null without it (or empty). */
    private static String cookie(Exchange ex, String name) {
        for (String header : ex.headers("Cookie")) {
            for (String c : header.split(";")) {
                String p = c.trim();
                if (p.startsWith(name + "=") && p.length() > name.length() + 1) {
                    return p.substring(name.length() + 1);
                }
            }
        }
        return null;
    }

    /** This browser's session id: its cookie's, or a new one given to it with this answer. */
    private String session(Exchange ex) {
        String s = cookie(ex, SESSION_COOKIE);
        if (s != null && SESSION.matcher(s).matches()) {
            return s;
        }
        s = newSession();
        ex.addHeader("Set-Cookie", cookie(ex, SESSION_COOKIE, s, -1));
        return s;
    }

    private static String newSession() {
        byte[] b = new byte[32];
        RANDOM.nextBytes(b);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    }

    /** The forms' token of {@code session}: HMAC-SHA256 under this process's key, so only this process can make it. */
    private String csrf(String session) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(key);
            return HexFormat.of().formatHex(mac.doFinal(("csrf:" + session).getBytes(StandardCharsets.US_ASCII)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
        }
    }

    /**
     * A Set-Cookie of this console's path: HttpOnly (no script reads it), SameSite=Strict (no other site's page sends it),
     * and Secure as api.cookies.secure says: always, never, or (auto) when the browser reached this server over TLS, here
     * or at a proxy in front that says so ({@code X-Forwarded-Proto: https}). A caller that forges that header only keeps
     * its own cookie off plain HTTP.
     */
    private String cookie(Exchange ex, String name, String value, int maxAge) {
        boolean secure = switch (secureCookies) {
            case "always" -> true;
            case "never" -> false;
            default -> tls || ex.secure() || "https".equalsIgnoreCase(String.valueOf(ex.header("X-Forwarded-Proto")).trim());
        };
        return name + "=" + value + "; Path=" + ROOT + "; HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
                + (maxAge >= 0 ? "; Max-Age=" + maxAge : "");
    }

    private void error(Exchange ex, int status, String detail, Page p) {
        send(ex, status, Html.page("Error " + status, p == null ? "" : nav(p),
                "<p class=\"bad\" id=\"error\">" + Html.text(detail) + "</p><p><a href=\"" + ROOT + "\">overview</a></p>"));
    }

    private static void redirect(Exchange ex, String to) {
        ex.setHeader("Location", to);
        ex.setHeader("Cache-Control", "no-store");
        ex.sendEmpty(303);
    }

    private static void send(Exchange ex, int status, String html) {
        byte[] body = html.getBytes(StandardCharsets.UTF_8);
        ex.setHeader("Cache-Control", "no-store");
        ex.setHeader("X-Content-Type-Options", "nosniff");
        ex.setHeader("Referrer-Policy", "no-referrer"); // a page's URL holds queue names and timer keys
        // no script, no frame, forms to this origin only: an escaping slip still runs nothing
        ex.setHeader("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self';"
                + " frame-ancestors 'none'; base-uri 'none'");
        ex.send(status, "text/html; charset=utf-8", body);
    }
}
