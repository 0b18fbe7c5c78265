package io.queen.timers.e2e.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.PostgresDatabase;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * Issue 42, point 2: the console in a real browser, Debian's chromium driven headless through its chromedriver. It
 * schedules a timer, sees it pending on its queue's page, watches it fire, replays a dead letter from the page, and
 * saves a screenshot of each step to docs/console/ (committed; docs/http-api.md#console shows them). The browser lane:
 * {@code mvn verify -Pbrowser} (.ci/run installs chromium and chromium-driver), never plain {@code mvn verify}.
 */
class ConsoleBrowserIT {

    static final Path CHROMIUM = Path.of(System.getProperty("chromium.binary", "/usr/bin/chromium"));
    static final Path CHROMEDRIVER = Path.of(System.getProperty("chromedriver.binary", "/usr/bin/chromedriver"));

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    static OperatorStack stack;
    static WebDriver browser;
    static Path profile;

    @BeforeAll
    static void start() throws Exception {
        assertThat(Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER))
                .as("the browser lane needs Debian's chromium and chromium-driver: apt-get install -y chromium chromium-driver").isTrue();
        stack = new OperatorStack(db, "console", Map.of("api.console.enabled", "true"));
        profile = Files.createTempDirectory("console-chromium");
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--no-first-run", "--disable-sync", "--user-data-dir=" + profile, "--window-size=1280,860");
        ChromeDriverService driver = new ChromeDriverService.Builder().usingDriverExecutable(CHROMEDRIVER.toFile()).usingAnyFreePort().build();
        browser = new ChromeDriver(driver, options);
        browser.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(30));
    }

    @AfterAll
    static void stop() {
        if (browser != null) {
            browser.quit();
        }
        if (stack != null) {
            stack.close();
        }
    }

    @Test
    void schedulePendingFiredAndAReplayedDeadLetterInABrowser() throws Exception {
        // a timer due in an hour (made due now once the page has shown it pending: however slow the machine, it is
        // pending while the page is read), a series, and a timer that becomes a dead letter
        assertThat(stack.schedule("""
                [{"op":"schedule","queue":"orders","timerKey":"order-1042/reminder","delayMs":3600000,"txn":"order-1042","payload":{"orderId":1042,"remind":"payment"}},
                 {"op":"schedule","queue":"orders","timerKey":"daily-report","every":"PT24H","txn":"report-series","payload":{"report":"daily"}},
                 {"op":"schedule","queue":"orders","timerKey":"order-1043/expire","delayMs":3600000,"txn":"order-1043","payload":{"orderId":1043}}]""",
                null).statusCode()).isEqualTo(200);
        assertThat(stack.schedule("[{\"op\":\"schedule\",\"queue\":\"payments\",\"timerKey\":\"charge-77\",\"delayMs\":3600000,"
                + "\"txn\":\"charge-77\",\"payload\":{\"chargeId\":77}}]", null).statusCode()).isEqualTo(200);
        stack.deadLetter(OperatorStack.TENANT_B, "payments", "charge-77");

        browser.get(stack.url("/console"));
        assertThat(browser.findElement(By.id("readiness")).getText()).isEqualTo("ready");
        assertThat(browser.findElement(By.id("dead-letters-count")).getText()).isEqualTo("1 dead letters");
        screenshot("overview");

        browser.findElement(By.name("name")).sendKeys("orders");
        browser.findElement(By.id("open-queue")).click();
        assertThat(browser.findElement(By.id("timers")).getText()).contains("order-1042/reminder", "daily-report", "PT24H");
        screenshot("queue");

        browser.findElement(By.linkText("order-1042/reminder")).click();
        assertThat(browser.findElement(By.id("pending")).getText()).contains("order-1042");
        assertThat(browser.findElement(By.id("payload")).getText()).contains("\"remind\" : \"payment\"");
        screenshot("timer-pending");

        // due now; watch it fire: the page, refreshed, shows it in the log with its offset
        assertThat(stack.schedule("""
                [{"op":"reschedule","queue":"orders","timerKey":"order-1042/reminder","delayMs":0,"txn":"order-1042","payload":{"orderId":1042,"remind":"payment"}}]""",
                null).statusCode()).isEqualTo(200);
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
            browser.navigate().refresh();
            assertThat(browser.findElement(By.id("fired")).getText()).startsWith("Fired");
        });
        assertThat(browser.findElements(By.id("pending"))).isEmpty();
        assertThat(browser.findElement(By.id("hits")).getText()).contains("offset");
        screenshot("timer-fired");
        browser.get(stack.url("/console/queue?name=orders"));
        assertThat(browser.findElement(By.id("timers")).getText()).doesNotContain("order-1042/reminder");

        browser.get(stack.url("/console/dead-letters"));
        assertThat(browser.findElement(By.id("dead-letters")).getText()).contains("charge-77", "downstream said no");
        browser.findElement(By.cssSelector("form input[name=reason]")).sendKeys("card issuer is back");
        browser.findElement(By.cssSelector("form input[name=delayMs]")).sendKeys("3600000");
        screenshot("dead-letters");
        browser.findElement(By.cssSelector("button.replay")).click();
        assertThat(browser.findElement(By.id("outcome")).getText()).contains("Replayed charge-77", "verdict scheduled", "now pending");
        screenshot("replayed");
        browser.findElement(By.id("back")).click();
        assertThat(browser.findElement(By.id("empty")).getText()).isEqualTo("No dead letters.");
        browser.get(stack.url("/console/queue?name=payments"));
        assertThat(browser.findElement(By.id("timers")).getText()).contains("charge-77"); // staged again, by the bridge
    }

    /** docs/console/NAME.png, when run from the repository (the module's directory is failsafe's working directory). */
    static void screenshot(String name) throws Exception {
        File shot = ((ChromeDriver) browser).getScreenshotAs(OutputType.FILE);
        Path docs = Path.of("").toAbsolutePath().resolveSibling("docs");
        Path dir = Files.isDirectory(docs) ? docs.resolve("console") : Path.of("target", "console");
        Files.createDirectories(dir);
        Files.copy(shot.toPath(), dir.resolve(name + ".png"), StandardCopyOption.REPLACE_EXISTING);
    }
}
