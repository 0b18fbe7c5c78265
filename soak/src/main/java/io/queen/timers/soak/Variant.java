package io.queen.timers.soak;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One settings variant the rig compares: the storage parameters of {@code queen.log_timers} and the
 * sweeper's claim settings. Every variant runs on a fresh database under the same load; the baseline
 * is the shipped defaults, every other variant changes one thing.
 */
public record Variant(String name, String changes, int fillfactor, double vacuumScaleFactor, int vacuumThreshold,
                      double vacuumInsertScaleFactor, int batchSize, int leaseSeconds, int tenantPerShard) {

    /** The shipped defaults: the storage parameters as the migrations leave them (V002) and the sweeper's settings. */
    public static final Variant BASELINE = new Variant("baseline", "shipped defaults", 100, 0.02, 1000, 0.05, 512, 30, 8);

    /** Every variant the rig knows, baseline first; {@code --variants} picks a subset by name. */
    public static List<Variant> all() {
        Variant b = BASELINE;
        return List.of(
                b,
                b.with("ff70", "fillfactor 70", 70, b.vacuumScaleFactor, b.vacuumThreshold, b.vacuumInsertScaleFactor, b.batchSize, b.leaseSeconds, b.tenantPerShard),
                b.with("ff90", "fillfactor 90 (the value before it was measured)", 90, b.vacuumScaleFactor, b.vacuumThreshold, b.vacuumInsertScaleFactor, b.batchSize, b.leaseSeconds, b.tenantPerShard),
                b.with("av-pgdefault", "autovacuum at PostgreSQL's defaults (scale 0.2, threshold 50, insert scale 0.2)",
                        b.fillfactor, 0.2, 50, 0.2, b.batchSize, b.leaseSeconds, b.tenantPerShard),
                b.with("av-eager", "autovacuum scale 0.005, threshold 500, insert scale 0.01",
                        b.fillfactor, 0.005, 500, 0.01, b.batchSize, b.leaseSeconds, b.tenantPerShard),
                b.with("batch128", "sweeper.batch.size 128", b.fillfactor, b.vacuumScaleFactor, b.vacuumThreshold, b.vacuumInsertScaleFactor, 128, b.leaseSeconds, b.tenantPerShard),
                b.with("batch1024", "sweeper.batch.size 1024", b.fillfactor, b.vacuumScaleFactor, b.vacuumThreshold, b.vacuumInsertScaleFactor, 1024, b.leaseSeconds, b.tenantPerShard),
                b.with("lease5s", "sweeper.lease 5s", b.fillfactor, b.vacuumScaleFactor, b.vacuumThreshold, b.vacuumInsertScaleFactor, b.batchSize, 5, b.tenantPerShard),
                b.with("slice2", "sweeper.tenant.per.shard 2", b.fillfactor, b.vacuumScaleFactor, b.vacuumThreshold, b.vacuumInsertScaleFactor, b.batchSize, b.leaseSeconds, 2),
                b.with("slice32", "sweeper.tenant.per.shard 32", b.fillfactor, b.vacuumScaleFactor, b.vacuumThreshold, b.vacuumInsertScaleFactor, b.batchSize, b.leaseSeconds, 32));
    }

    private Variant with(String n, String c, int ff, double vsf, int vt, double visf, int batch, int lease, int slice) {
        return new Variant(n, c, ff, vsf, vt, visf, batch, lease, slice);
    }

    /** The storage parameters, applied to the fresh database after the migrations and before any row. */
    public String storageSql() {
        return "ALTER TABLE queen.log_timers SET (fillfactor = " + fillfactor
                + ", autovacuum_vacuum_scale_factor = " + vacuumScaleFactor
                + ", autovacuum_vacuum_threshold = " + vacuumThreshold
                + ", autovacuum_vacuum_insert_scale_factor = " + vacuumInsertScaleFactor + ")";
    }

    public Map<String, String> sweeperSettings() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("sweeper.batch.size", Integer.toString(batchSize));
        m.put("sweeper.lease", leaseSeconds + "s");
        m.put("sweeper.tenant.per.shard", Integer.toString(tenantPerShard));
        return m;
    }

    public String database() {
        return "soak_" + name.replaceAll("[^A-Za-z0-9]", "_");
    }
}
