package io.queen.timers.sweeper;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * What a Queen broker's boot does to the database: applies its SQL files in order, every statement on its
 * own in autocommit (Queen's applier runs CREATE INDEX CONCURRENTLY outside a transaction). The files come
 * from a Queen checkout (QUEEN_SQL_DIR = its server/sql); nothing of Queen's is in this repository.
 */
final class QueenBoot {

    /** The files of the version docs/schema-and-roles.md pins, in Queen's boot order, relative to server/sql. */
    static final List<String> FILES = List.of("schema.sql", "procedures/001_log_schema.sql", "procedures/002_streams_schema.sql",
            "procedures/003_log_push.sql", "procedures/004_log_pop.sql", "procedures/005_log_ack.sql",
            "procedures/006_log_maintenance.sql");

    private final Path dir;

    QueenBoot(Path dir) {
        this.dir = dir;
    }

    void boot(DataSource ds) throws IOException, SQLException {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
            c.setAutoCommit(true);
            for (String file : FILES) {
                String text = Files.readString(dir.resolve(file), StandardCharsets.UTF_8);
                for (String sql : statements(text)) {
                    try {
                        st.execute(sql);
                    } catch (SQLException e) {
                        throw new SQLException("Queen's " + file + " failed (" + e.getSQLState() + "): " + e.getMessage()
                                + "\n  at: " + sql.substring(0, Math.min(200, sql.length())), e.getSQLState(), e);
                    }
                }
            }
        }
    }

    /** Splits SQL text at top-level semicolons, outside quotes, dollar quotes and comments. */
    static List<String> statements(String sql) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        int i = 0;
        int n = sql.length();
        while (i < n) {
            char ch = sql.charAt(i);
            if (ch == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
                int end = sql.indexOf('\n', i);
                i = end < 0 ? n : end;
            } else if (ch == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
                int end = sql.indexOf("*/", i + 2);
                i = end < 0 ? n : end + 2;
            } else if (ch == '\'' || ch == '"') {
                int end = i + 1;
                while (end < n && !(sql.charAt(end) == ch && (end + 1 >= n || sql.charAt(end + 1) != ch))) {
                    end += sql.charAt(end) == ch ? 2 : 1;
                }
                cur.append(sql, i, Math.min(n, end + 1));
                i = end + 1;
            } else if (ch == '$' && dollarTag(sql, i) != null) {
                String tag = dollarTag(sql, i);
                int end = sql.indexOf(tag, i + tag.length());
                end = end < 0 ? n : end + tag.length();
                cur.append(sql, i, end);
                i = end;
            } else if (ch == ';') {
                add(out, cur);
                i++;
            } else {
                cur.append(ch);
                i++;
            }
        }
        add(out, cur);
        return out;
    }

    private static String dollarTag(String sql, int at) {
        int j = at + 1;
        while (j < sql.length() && (Character.isLetterOrDigit(sql.charAt(j)) || sql.charAt(j) == '_')) {
            j++;
        }
        if (j < sql.length() && sql.charAt(j) == '$' && (j == at + 1 || !Character.isDigit(sql.charAt(at + 1)))) {
            return sql.substring(at, j + 1);
        }
        return null;
    }

    private static void add(List<String> out, StringBuilder cur) {
        String s = cur.toString().strip();
        if (!s.isEmpty()) {
            out.add(s);
        }
        cur.setLength(0);
    }
}
