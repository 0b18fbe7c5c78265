package io.queen.timers.sweeper;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The statement splitter QueenCoexistenceIT applies Queen's files with (pure code, runs in CI). */
class QueenBootTest {

    @Test
    void splitsAtTopLevelSemicolonsOnly() {
        String sql = """
                -- a comment; with a semicolon and a quote's apostrophe
                CREATE TABLE t (a TEXT DEFAULT 'x;y', "b;c" INT);
                /* block; comment */
                CREATE INDEX CONCURRENTLY IF NOT EXISTS i ON t (a);
                CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $$
                BEGIN
                    -- inside the body; still one statement
                    RETURN 1;
                END;
                $$;
                DO $body$ BEGIN PERFORM 'it''s; fine'; END $body$;
                SELECT $1::int""";
        assertThat(QueenBoot.statements(sql)).hasSize(5);
        assertThat(QueenBoot.statements(sql).get(0)).isEqualTo("CREATE TABLE t (a TEXT DEFAULT 'x;y', \"b;c\" INT)");
        assertThat(QueenBoot.statements(sql).get(2)).contains("RETURN 1;").endsWith("$$");
        assertThat(QueenBoot.statements(sql).get(3)).isEqualTo("DO $body$ BEGIN PERFORM 'it''s; fine'; END $body$");
        assertThat(QueenBoot.statements(sql).get(4)).isEqualTo("SELECT $1::int");
    }
}
