package io.queen.timers.e2e.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queen.timers.core.config.ConfigException;
import io.queen.timers.http.HttpMain;
import io.queen.timers.http.console.Console;
import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.PostgresDatabase;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 42, point 2: the console's pages over HTTP (ConsoleBrowserIT drives them in a browser): hostile keys and
 * payloads escaped, forms refused without their session's token, the admin token kept in an HttpOnly SameSite cookie,
 * and the setting's rule. Issue 54, point 5: a token per session, refused for any other; cookies Secure behind TLS.
 */
class ConsoleIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    static final Pattern CSRF = Pattern.compile("name=\"csrf\" value=\"([0-9a-f]{64})\"");
    static OperatorStack stack;

    @BeforeAll
    static void start() throws Exception {
        stack = new OperatorStack(db, "console", Map.of("api.console.enabled", "true"));
    }

    @AfterAll
    static void stop() {
        if (stack != null) {
            stack.close();
        }
    }

    @Test
    void aHostileKeyAndPayloadAreShownAsTextNeverAsMarkup() throws Exception {
        String key = "<script>alert(1)</script>\"'&";
        String json = "[{\"op\":\"schedule\",\"queue\":\"console.xss\",\"timerKey\":\"<script>alert(1)</script>\\\"'&\",\"delayMs\":3600000,"
                + "\"txn\":\"<b>t</b>\",\"payload\":{\"html\":\"<img src=x onerror=alert(2)>\"}}]";
        HttpResponse<String> scheduled = stack.schedule(json, null);
        assertThat(scheduled.statusCode()).as(scheduled.body()).isEqualTo(200);

        HttpResponse<String> queue = get("/console/queue?name=console.xss", null);
        assertThat(queue.statusCode()).as(queue.body()).isEqualTo(200);
        assertThat(queue.headers().firstValue("Content-Type")).hasValue("text/html; charset=utf-8");
        assertThat(queue.headers().firstValue("Content-Security-Policy")).hasValueSatisfying(v -> assertThat(v).contains("default-src 'none'"));
        assertThat(queue.body()).doesNotContain("<script>", "<b>t</b>")
                .contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;", "&lt;b&gt;t&lt;/b&gt;");

        HttpResponse<String> timer = get("/console/timer?queue=console.xss&key=" + enc(key), null);
        assertThat(timer.statusCode()).as(timer.body()).isEqualTo(200);
        assertThat(timer.body()).doesNotContain("<script>", "<img").contains("&lt;img src=x onerror=alert(2)&gt;")
                .contains("<title>Timer &lt;script&gt;");
    }

    @Test
    void aFormWithoutItsSessionsTokenChangesNothing() throws Exception {
        stack.schedule("[{\"op\":\"schedule\",\"queue\":\"console.csrf\",\"timerKey\":\"k\",\"delayMs\":3600000,\"txn\":\"c\",\"payload\":1}]", null);
        stack.deadLetter(OperatorStack.TENANT_B, "console.csrf", "k");
        HttpResponse<String> page = get("/console/dead-letters?queue=console.csrf", null);
        assertThat(page.statusCode()).as(page.body()).isEqualTo(200);
        Matcher id = Pattern.compile("name=\"id\" value=\"([0-9a-f-]{36})\"").matcher(page.body());
        assertThat(id.find()).as(page.body()).isTrue();
        Session session = Session.of(page);

        // a page of another site posts the form: without the token, with a guessed one, or without the session, nothing happens
        assertThat(post("/console/dead-letters/drop", "id=" + id.group(1) + "&reason=forged", session.cookie()).statusCode()).isEqualTo(403);
        assertThat(post("/console/dead-letters/drop", "id=" + id.group(1) + "&reason=forged&csrf=" + "0".repeat(64), session.cookie())
                .statusCode()).isEqualTo(403);
        assertThat(post("/console/dead-letters/drop", "id=" + id.group(1) + "&reason=forged&csrf=" + session.csrf(), null).statusCode())
                .isEqualTo(403);
        assertThat(get("/console/dead-letters?queue=console.csrf", null).body()).contains(id.group(1));

        HttpResponse<String> drop = post("/console/dead-letters/drop", "id=" + id.group(1) + "&reason=refunded&csrf=" + session.csrf(),
                session.cookie());
        assertThat(drop.statusCode()).as(drop.body()).isEqualTo(200);
        assertThat(drop.body()).contains("Dropped the dead letter of <code>k</code>");
        assertThat(get("/console/dead-letters?queue=console.csrf", null).body()).doesNotContain(id.group(1)).contains("No dead letters");
    }

    @Test
    void oneSessionsTokenIsRefusedForAnother() throws Exception {
        stack.schedule("[{\"op\":\"schedule\",\"queue\":\"console.sessions\",\"timerKey\":\"k\",\"delayMs\":3600000,\"txn\":\"s\","
                + "\"payload\":1}]", null);
        stack.deadLetter(OperatorStack.TENANT_B, "console.sessions", "k");
        HttpResponse<String> first = get("/console/dead-letters?queue=console.sessions", null);
        HttpResponse<String> second = get("/console/dead-letters?queue=console.sessions", null);
        Session mine = Session.of(first);
        Session theirs = Session.of(second);
        assertThat(theirs.cookie()).as("each browser gets its own session").isNotEqualTo(mine.cookie());
        assertThat(theirs.csrf()).as("and its own token").isNotEqualTo(mine.csrf());
        // a page served in the same session keeps its token: one session, one token (not one per page)
        assertThat(csrf(get("/console/dead-letters?queue=console.sessions", mine.cookie()).body())).isEqualTo(mine.csrf());
        Matcher id = Pattern.compile("name=\"id\" value=\"([0-9a-f-]{36})\"").matcher(first.body());
        assertThat(id.find()).as(first.body()).isTrue();

        // their token in my session (an attacker's own session's token, or one read from another browser) is refused
        HttpResponse<String> crossed = post("/console/dead-letters/drop", "id=" + id.group(1) + "&reason=crossed&csrf=" + theirs.csrf(),
                mine.cookie());
        assertThat(crossed.statusCode()).as(crossed.body()).isEqualTo(403);
        assertThat(crossed.body()).contains("session");
        assertThat(get("/console/dead-letters?queue=console.sessions", null).body()).contains(id.group(1));
        // my token in my session goes through
        HttpResponse<String> mineDrop = post("/console/dead-letters/drop", "id=" + id.group(1) + "&reason=mine&csrf=" + mine.csrf(),
                mine.cookie());
        assertThat(mineDrop.statusCode()).as(mineDrop.body()).isEqualTo(200);
        // the session cookie: HttpOnly, SameSite=Strict, of the console's path; Secure only over TLS (HttpReadsIT) or by setting
        assertThat(mine.setCookie()).contains("HttpOnly", "SameSite=Strict", "Path=/console").doesNotContain("Secure");
    }

    @Test
    void cookiesAreSecureBehindATlsProxyOrWhenTheSettingSaysSo() throws Exception {
        // auto (the default): a proxy in front that terminated TLS says so, and the cookies are Secure for that browser
        HttpResponse<String> proxied = OperatorStack.HTTP.send(HttpRequest.newBuilder(URI.create(stack.url("/console/login")))
                .header("X-Forwarded-Proto", "https").GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(Session.of(proxied).setCookie()).contains("; Secure", "HttpOnly", "SameSite=Strict");
        try (HttpMain always = HttpMain.start(stack.operatorConfig(Map.of("api.console.enabled", "true", "api.cookies.secure", "always")))) {
            HttpResponse<String> r = OperatorStack.HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + always.port()
                    + "/console/login")).GET().build(), HttpResponse.BodyHandlers.ofString());
            assertThat(Session.of(r).setCookie()).contains("; Secure");
        }
        try (HttpMain never = HttpMain.start(stack.operatorConfig(Map.of("api.console.enabled", "true", "api.cookies.secure", "never")))) {
            HttpResponse<String> r = OperatorStack.HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + never.port()
                    + "/console/login")).header("X-Forwarded-Proto", "https").GET().build(), HttpResponse.BodyHandlers.ofString());
            assertThat(Session.of(r).setCookie()).doesNotContain("Secure");
        }
        assertThatThrownBy(() -> stack.config(Map.of("api.cookies.secure", "sometimes"))).isInstanceOf(ConfigException.class)
                .hasMessageContaining("api.cookies.secure");
    }

    @Test
    void aBrowserSignsInWithAnAdminTokenKeptInAStrictHttpOnlyCookie() throws Exception {
        Session session = Session.of(get("/console/login", null));
        HttpResponse<String> signIn = post("/console/login", "token=" + stack.adminToken() + "&csrf=" + session.csrf(), session.cookie());
        assertThat(signIn.statusCode()).as(signIn.body()).isEqualTo(303);
        String cookie = setCookie(signIn, Console.COOKIE);
        assertThat(cookie).startsWith(Console.COOKIE + "=").contains("HttpOnly", "SameSite=Strict", "Path=/console");
        // sign-in starts a new session: the one before it (which someone else may have planted) is worth nothing after
        String renewed = setCookie(signIn, Console.SESSION_COOKIE);
        assertThat(renewed.substring(0, renewed.indexOf(';'))).isNotEqualTo(session.cookie());
        String pair = cookie.substring(0, cookie.indexOf(';'));

        HttpResponse<String> overview = get("/console", pair);
        assertThat(overview.statusCode()).as(overview.body()).isEqualTo(200);
        assertThat(overview.body()).contains("tenant " + OperatorStack.TENANT_A, "topic " + stack.jwt, "Sign out", "id=\"readiness\" class=\"ok\"");
        // without the cookie: the topic without auth, tenant B
        assertThat(get("/console", null).body()).contains("tenant " + OperatorStack.TENANT_B);

        assertThat(post("/console/login", "token=not-a-token&csrf=" + session.csrf(), session.cookie()).statusCode()).isEqualTo(401);
        assertThat(post("/console/login", "token=" + stack.adminToken(), session.cookie()).statusCode()).isEqualTo(403); // no form token
        // a producer's token signs in, but the operator pages need the admin claim, as the JSON routes do
        HttpResponse<String> producer = post("/console/login", "token=" + stack.producerToken() + "&csrf=" + session.csrf(), session.cookie());
        String producerCookie = setCookie(producer, Console.COOKIE);
        HttpResponse<String> refused = get("/console/dead-letters", producerCookie.substring(0, producerCookie.indexOf(';')));
        assertThat(refused.statusCode()).isEqualTo(403);
        assertThat(refused.body()).contains("admin claim");
    }

    @Test
    void theConsoleIsOffByDefaultAndNeedsTheReads() throws Exception {
        assertThatThrownBy(() -> stack.config(Map.of("api.console.enabled", "true")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("api.reads.enabled");
        try (HttpMain readsOnly = HttpMain.start(stack.config(Map.of("api.reads.enabled", "true")))) {
            HttpResponse<String> r = OperatorStack.HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + readsOnly.port() + "/console"))
                    .GET().build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(404);
        }
    }

    /** A browser's console session: the cookie it was given ({@code name=value}), as set, and the token its pages carry. */
    record Session(String cookie, String setCookie, String csrf) {
        static Session of(HttpResponse<String> page) {
            String set = ConsoleIT.setCookie(page, Console.SESSION_COOKIE);
            return new Session(set.substring(0, set.indexOf(";")), set, ConsoleIT.csrf(page.body()));
        }
    }

    /** The Set-Cookie of the cookie {@code name} in {@code r}. */
    static String setCookie(HttpResponse<String> r, String name) {
        return r.headers().allValues("Set-Cookie").stream().filter(c -> c.startsWith(name + "=")).findFirst()
                .orElseThrow(() -> new AssertionError("no Set-Cookie of " + name + " in " + r.headers().map()));
    }

    static String csrf(String html) {
        Matcher m = CSRF.matcher(html);
        assertThat(m.find()).as(html).isTrue();
        return m.group(1);
    }

    static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    static HttpResponse<String> get(String path, String cookie) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(stack.url(path))).GET();
        if (cookie != null) {
            b.header("Cookie", cookie);
        }
        return OperatorStack.HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    static HttpResponse<String> post(String path, String form, String cookie) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(stack.url(path)))
                .header("Content-Type", "application/x-www-form-urlencoded").POST(HttpRequest.BodyPublishers.ofString(form));
        if (cookie != null) {
            b.header("Cookie", cookie);
        }
        return OperatorStack.HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }
}
