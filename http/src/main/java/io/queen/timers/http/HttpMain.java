package io.queen.timers.http;

import io.queen.timers.bridge.TopicRoutes;
import io.queen.timers.core.audit.AuditTopics;
import io.queen.timers.core.config.ConfigLoader;
import io.queen.timers.core.config.KafkaSettings;
import io.queen.timers.core.ops.ServiceHost;
import io.queen.timers.http.api.ApiServer;
import io.queen.timers.http.route.CommandTopics;
import io.queen.timers.http.send.SenderPool;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP API process: configuration → the bridge's topic routes and token rules → a sender pool per command topic
 * → the API server on api.port. {@link #main} takes {@code --config FILE}; {@link #host} runs it under a
 * {@link ServiceHost} (/health and /metrics on http.port, as every service); {@link #start} runs it in this JVM.
 */
public final class HttpMain implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(HttpMain.class);

    private final ApiServer api;
    private final Map<String, SenderPool> senders;
    private final CountDownLatch closed = new CountDownLatch(1);

    private HttpMain(ApiServer api, Map<String, SenderPool> senders) {
        this.api = api;
        this.senders = senders;
    }

    public static void main(String[] args) {
        ServiceHost.main("http", args, file -> HttpSettings.from(ConfigLoader.load(HttpSettings.definition(), file)), HttpMain::host);
    }

    /** Runs the API under a {@link ServiceHost} in this JVM (the launcher's `http` subcommand). */
    public static ServiceHost host(HttpSettings settings) {
        return ServiceHost.start("http", settings.common(), deps -> {
            HttpMain http = start(settings);
            return new ServiceHost.Running(http::awaitTermination, http);
        });
    }

    /** Starts the API in this JVM: fails at once on a bad setting, an unreadable key file or an audit topic that does not exist. */
    public static HttpMain start(HttpSettings s) {
        TopicRoutes routes = s.routes();
        CommandTopics topics = new CommandTopics(routes, s.commandTopics());
        AuditTopics audit = s.auditTopics();
        Map<String, SenderPool> senders = new LinkedHashMap<>();
        try {
            for (String topic : s.commandTopics().isEmpty() ? routes.tenants().keySet() : s.commandTopics()) {
                senders.put(topic, new SenderPool(s.common().kafka(KafkaSettings.Client.PRODUCER), s.common().kafka(KafkaSettings.Client.CONSUMER),
                        audit.topicFor(routes.route(topic).tenant()), s.senders()));
            }
            ApiServer api = ApiServer.start(s, topics, senders);
            LOG.info("HTTP API on {}:{}, writing to {}", s.bindAddress(), api.port(), senders.keySet());
            return new HttpMain(api, senders);
        } catch (RuntimeException e) {
            senders.values().forEach(SenderPool::close);
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
        closed.countDown();
    }
}
