package io.queen.timers.http;

import com.zaxxer.hikari.HikariDataSource;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.core.config.AuditTopics;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.ConfigLoader;
import io.queen.timers.core.config.KafkaSettings;
import io.queen.timers.core.db.DataSources;
import io.queen.timers.core.db.DatabaseRole;
import io.queen.timers.core.db.SessionTimeouts;
import io.queen.timers.core.ops.Dependencies;
import io.queen.timers.core.ops.KafkaVersion;
import io.queen.timers.core.ops.SchemaStep;
import io.queen.timers.core.ops.ServiceHost;
import io.queen.timers.core.ops.ServiceKind;
import io.queen.timers.core.ops.Startup;
import io.queen.timers.http.api.ApiServer;
import io.queen.timers.http.route.CommandTopics;
import io.queen.timers.http.send.SenderPool;
import io.queen.timers.routes.TopicRoutes;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP API process: configuration → the command topics' routes and token rules (the bridge's) → a sender pool per command topic
 * → the API server on api.port. {@link #main} takes {@code --config FILE}; {@link #host} runs it under a
 * {@link ServiceHost} (/health and /metrics on http.port, as every service); {@link #start} runs it in this JVM.
 */
public final class HttpMain implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(HttpMain.class);

    private final ApiServer api;
    private final Map<String, SenderPool> senders;
    private final HikariDataSource operator;
    private final CountDownLatch closed = new CountDownLatch(1);

    private HttpMain(ApiServer api, Map<String, SenderPool> senders, HikariDataSource operator) {
        this.api = api;
        this.senders = senders;
        this.operator = operator;
    }

    /** The API as a stack runs it (the test stack): with api.reads.enabled its login is one of queen_operator. */
    public static final ServiceKind<HttpMain> SERVICE = new ServiceKind<>("http", DatabaseRole.OPERATOR, HttpSettings::definition,
            (settings, deps) -> start(HttpSettings.from(settings), deps), settings -> host(HttpSettings.from(settings)),
            ServiceKind.NOTHING);

    public static void main(String[] args) {
        ServiceHost.main("http", args, file -> HttpSettings.from(ConfigLoader.load(HttpSettings.definition(), file)), HttpMain::host);
    }

    /** Runs the API under a {@link ServiceHost} in this JVM (the launcher's `http` subcommand). */
    public static ServiceHost host(HttpSettings settings) {
        return ServiceHost.start("http", settings.common(), deps -> {
            HttpMain http = start(settings, deps);
            return new ServiceHost.Running(http::awaitTermination, http);
        });
    }

    /** Starts the API in this JVM: fails at once on a bad setting, an unreadable key file or an audit topic that does not exist. */
    public static HttpMain start(HttpSettings s) {
        return start(s, Dependencies.defaults(new SimpleMeterRegistry()));
    }

    /**
     * As above, with the host's registry and start-up retries. With api.reads.enabled the process connects to PostgreSQL
     * as a login of queen_operator, checked first as every service's role is (DatabaseRole: a superuser, the owner or a
     * member of another service's role refuses to start, unless db.role.check=false).
     */
    public static HttpMain start(HttpSettings s, Dependencies deps) {
        CommonSettings common = s.common();
        MeterRegistry registry = deps.registry() != null ? deps.registry() : new SimpleMeterRegistry();
        Startup startup = deps.startup() != null ? deps.startup()
                : new Startup("http", common.outages().startupTimeout(), common.retryPauseMax(), Clock.systemUTC());
        TopicRoutes routes = s.topics().routing().routes();
        CommandTopics topics = new CommandTopics(routes, s.topics().commandTopics());
        AuditTopics audit = s.topics().auditTopics();
        // it writes commands and reads verdicts: a Kafka cluster older than the oldest supported is refused in one sentence
        KafkaVersion.requireAtStart(common.kafka(KafkaSettings.Client.ADMIN), "http");
        Map<String, SenderPool> senders = new LinkedHashMap<>();
        HikariDataSource operator = null;
        try {
            if (s.operator().readsEnabled()) {
                SchemaStep.atStart(common, registry, startup, "http", DatabaseRole.OPERATOR);
                operator = DataSources.create(common.database(), SessionTimeouts.OPERATOR.named("queen-http"), registry);
            }
            for (String topic : s.topics().commandTopics().isEmpty() ? routes.tenants().keySet() : s.topics().commandTopics()) {
                senders.put(topic, new SenderPool(s.common().kafka(KafkaSettings.Client.PRODUCER), s.common().kafka(KafkaSettings.Client.CONSUMER),
                        audit.topicFor(routes.route(topic).tenant()), s.limits().senders()));
            }
            ApiServer api = ApiServer.start(s, topics, senders, operator, common.kafka(KafkaSettings.Client.ADMIN), deps.health());
            LOG.info("HTTP API on {}:{} ({}), writing to {}{}{}", s.listen().bindAddress(), api.port(), s.listen().tlsKeyStore() == null ? "http" : "https",
                    senders.keySet(), s.operator().readsEnabled() ? ", operator reads on" : "", s.operator().consoleEnabled() ? ", console on /console" : "");
            return new HttpMain(api, senders, operator);
        } catch (RuntimeException e) {
            senders.values().forEach(SenderPool::close);
            if (operator != null) {
                operator.close();
            }
            throw e;
        }
    }

    public int port() {
        return api.port();
    }

    public void awaitTermination() {
        try {
            closed.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        api.close();
        senders.values().forEach(SenderPool::close);
        if (operator != null) {
            operator.close();
        }
        closed.countDown();
    }
}
