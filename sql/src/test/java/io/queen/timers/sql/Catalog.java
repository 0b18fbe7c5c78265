package io.queen.timers.sql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/** Reads what PostgreSQL itself says a table is, so tests compare catalogs and not our own text. */
final class Catalog {

    /** One column as the catalog describes it; generated = 's' for STORED, '' otherwise. */
    record Column(String name, String type, boolean notNull, String collation, String generated, String expression) {}

    record Index(String name, boolean primary, String definition) {}

    private Catalog() {}

    static List<Column> columns(DataSource ds, String table) throws SQLException {
        String sql = """
                SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
                       coalesce(co.collname, ''), a.attgenerated::text, coalesce(pg_get_expr(d.adbin, d.adrelid), '')
                  FROM pg_attribute a
                  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                  LEFT JOIN pg_collation co ON co.oid = a.attcollation
                 WHERE a.attrelid = ?::regclass AND a.attnum > 0 AND NOT a.attisdropped
                 ORDER BY a.attnum""";
        List<Column> out = new ArrayList<>();
        try (Connection c = ds.getConnection(); PreparedStatement st = c.prepareStatement(sql)) {
            st.setString(1, table);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    out.add(new Column(rs.getString(1), rs.getString(2), rs.getBoolean(3), rs.getString(4),
                            rs.getString(5), rs.getString(6)));
                }
            }
        }
        return out;
    }

    static List<Index> indexes(DataSource ds, String table) throws SQLException {
        String sql = """
                SELECT i.indexrelid::regclass::text, i.indisprimary, pg_get_indexdef(i.indexrelid)
                  FROM pg_index i WHERE i.indrelid = ?::regclass ORDER BY 1""";
        List<Index> out = new ArrayList<>();
        try (Connection c = ds.getConnection(); PreparedStatement st = c.prepareStatement(sql)) {
            st.setString(1, table);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    out.add(new Index(rs.getString(1), rs.getBoolean(2), rs.getString(3)));
                }
            }
        }
        return out;
    }

    /** Constraints as PostgreSQL prints them ("FOREIGN KEY (queue_id) REFERENCES ..."), sorted. */
    static List<String> constraints(DataSource ds, String table) throws SQLException {
        return strings(ds, "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = ?::regclass"
                + " AND contype <> 'n' ORDER BY 1", table);
    }

    /** Storage parameters (pg_class.reloptions, then the TOAST table's as toast.*), sorted. */
    static List<String> storageParameters(DataSource ds, String table) throws SQLException {
        return strings(ds, """
                SELECT o FROM pg_class c, unnest(c.reloptions) o WHERE c.oid = ?::regclass
                UNION ALL
                SELECT 'toast.' || o FROM pg_class c JOIN pg_class t ON t.oid = c.reltoastrelid, unnest(t.reloptions) o
                 WHERE c.oid = ?::regclass
                 ORDER BY 1""", table, table);
    }

    /** Columns whose storage is not their type's default, as "column storage" (e = EXTERNAL). */
    static List<String> storageOverrides(DataSource ds, String table) throws SQLException {
        return strings(ds, """
                SELECT a.attname || ' ' || a.attstorage::text FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
                 WHERE a.attrelid = ?::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attstorage <> t.typstorage
                 ORDER BY 1""", table);
    }

    /** A function as "name(arguments with names) RETURNS result LANGUAGE l volatility". */
    static String function(DataSource ds, String signature) throws SQLException {
        List<String> out = strings(ds, """
                SELECT p.proname || '(' || pg_get_function_arguments(p.oid) || ') RETURNS '
                       || pg_get_function_result(p.oid) || ' LANGUAGE ' || l.lanname || ' '
                       || CASE p.provolatile WHEN 'i' THEN 'IMMUTABLE' WHEN 's' THEN 'STABLE' ELSE 'VOLATILE' END
                  FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
                 WHERE p.oid = to_regprocedure(?)""", signature);
        return out.isEmpty() ? null : out.get(0);
    }

    private static List<String> strings(DataSource ds, String sql, String... args) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Connection c = ds.getConnection(); PreparedStatement st = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                st.setString(i + 1, args[i]);
            }
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getString(1));
                }
            }
        }
        return out;
    }
}
