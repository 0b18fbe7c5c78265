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
}
