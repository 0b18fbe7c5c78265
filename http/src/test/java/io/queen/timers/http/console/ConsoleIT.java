package io.queen.timers.http.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queen.timers.http.OperatorStack;
import io.queen.timers.core.config.ConfigException;
import io.queen.timers.http.HttpMain;
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
 * payloads escaped, forms refused without the process's token, the admin token kept in an HttpOnly SameSite cookie,
 * and the setting's rule.
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
    void aFormWithoutTheProcessTokenChangesNothing() throws Exception {
        stack.schedule("[{\"op\":\"schedule\",\"queue\":\"console.csrf\",\"timerKey\":\"k\",\"delayMs\":3600000,\"txn\":\"c\",\"payload\":1}]", null);
        stack.deadLetter(OperatorStack.TENANT_B, "console.csrf", "k");
        HttpResponse<String> page = get("/console/dead-letters?queue=console.csrf", null);
        assertThat(page.statusCode()).as(page.body()).isEqualTo(200);
        Matcher id = Pattern.compile("name=\"id\" value=\"([0-9a-f-]{36})\"").matcher(page.body());
        assertThat(id.find()).as(page.body()).isTrue();
        String csrf = csrf(page.body());

        // a page of another site posts the form: without the token, or with a guessed one, nothing happens
        assertThat(post("/console/dead-letters/drop", "id=" + id.group(1) + "&reason=forged", null).statusCode()).isEqualTo(403);
        assertThat(post("/console/dead-letters/drop", "id=" + id.group(1) + "&reason=forged&csrf=" + "0".repeat(64), null).statusCode())
                .isEqualTo(403);
        assertThat(get("/console/dead-letters?queue=console.csrf", null).body()).contains(id.group(1));

        HttpResponse<String> drop = post("/console/dead-letters/drop", "id=" + id.group(1) + "&reason=refunded&csrf=" + csrf, null);
        assertThat(drop.statusCode()).as(drop.body()).isEqualTo(200);
        assertThat(drop.body()).contains("Dropped the dead letter of <code>k</code>");
        assertThat(get("/console/dead-letters?queue=console.csrf", null).body()).doesNotContain(id.group(1)).contains("No dead letters");
    }

    @Test
    void aBrowserSignsInWithAnAdminTokenKeptInAStrictHttpOnlyCookie() throws Exception {
        String csrf = csrf(get("/console/login", null).body());
        HttpResponse<String> signIn = post("/console/login", "token=" + stack.adminToken() + "&csrf=" + csrf, null);
        assertThat(signIn.statusCode()).as(signIn.body()).isEqualTo(303);
        String cookie = signIn.headers().firstValue("Set-Cookie").orElseThrow();
        assertThat(cookie).startsWith(Console.COOKIE + "=").contains("HttpOnly", "SameSite=Strict", "Path=/console");
        String pair = cookie.substring(0, cookie.indexOf(';'));

        HttpResponse<String> overview = get("/console", pair);
        assertThat(overview.statusCode()).as(overview.body()).isEqualTo(200);
        assertThat(overview.body()).contains("tenant " + OperatorStack.TENANT_A, "topic " + stack.jwt, "Sign out", "id=\"readiness\" class=\"ok\"");
        // without the cookie: the topic without auth, tenant B
        assertThat(get("/console", null).body()).contains("tenant " + OperatorStack.TENANT_B);

        assertThat(post("/console/login", "token=not-a-token&csrf=" + csrf, null).statusCode()).isEqualTo(401);
        assertThat(post("/console/login", "token=" + stack.adminToken(), null).statusCode()).isEqualTo(403); // no form token
        // a producer's token signs in, but the operator pages need the admin claim, as the JSON routes do
        HttpResponse<String> producer = post("/console/login", "token=" + stack.producerToken() + "&csrf=" + csrf, null);
        String producerCookie = producer.headers().firstValue("Set-Cookie").orElseThrow();
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
