package io.queen.timers.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docker/Dockerfile, read (there is no Docker engine to build it here): it builds and runs the service-only jar,
 * and every role docker-compose gives the image is a command of that jar.
 */
class ImageTest {

    static final Path DOCKER = Path.of("..", "docker");

    @Test
    void theImageRunsTheServiceOnlyJar() throws Exception {
        List<String> lines = Files.readAllLines(DOCKER.resolve("Dockerfile"));
        assertThat(lines).anySatisfy(l -> assertThat(l).matches("RUN mvn .* -pl cli -am package"));
        assertThat(lines).contains("COPY --from=build /src/cli/target/queen-timers-service.jar /app/queen-timers.jar");
        assertThat(lines).noneMatch(l -> l.contains("local/target/queen-timers.jar") && l.startsWith("COPY"));
        assertThat(lines).anySatisfy(l -> assertThat(l).startsWith("ENTRYPOINT [").contains("\"-jar\", \"/app/queen-timers.jar\""));
        // the jar the COPY names is the one this module's shade writes
        assertThat(Files.readString(Path.of("pom.xml"))).contains("<finalName>queen-timers-service</finalName>");
    }

    @Test
    void everyRoleComposeGivesTheImageIsACommandOfTheServiceJar() throws Exception {
        Set<String> commands = QueenTimers.commandLine(new QueenTimers(java.util.Map.of()),
                new PrintWriter(new StringWriter()), new PrintWriter(new StringWriter())).getSubcommands().keySet();
        assertThat(commands).contains("bridge", "sweeper", "migrate").doesNotContain("local");

        Matcher m = Pattern.compile("(?m)^    command: \\[\"([a-z-]+)\"").matcher(Files.readString(DOCKER.resolve("docker-compose.yml")));
        int roles = 0;
        while (m.find()) {
            assertThat(commands).as("compose runs the image as `%s`", m.group(1)).contains(m.group(1));
            roles++;
        }
        assertThat(roles).as("migrate, bridge, sweeper").isGreaterThanOrEqualTo(3);
    }
}
