-- Rows with named fields: the check every function that takes a jsonb array of rows runs first
-- (docs/decisions.md#rows-not-parallel-arrays).
--
-- Guarantees: a row that lacks a key -- a field left out or spelt wrong, which jsonb_to_recordset would
-- read as NULL -- fails the whole call with SQLSTATE 22023 naming the caller, the row (1-based) and the
-- key. A null value is fine where the column is nullable; keys beyond the named ones are not looked for.
--
-- Locks: none (IMMUTABLE). PRICE: one pass over the array's elements per call.

-- A jsonb array of rows, returned as it is after checking that every row is an object carrying every
-- key of p_fields. p_what names the caller and the kind of row in the error.
CREATE OR REPLACE FUNCTION queen.json_rows_v1(p_what TEXT, p_rows JSONB, p_fields TEXT[])
RETURNS JSONB
LANGUAGE plpgsql
IMMUTABLE
AS $$
DECLARE
    v_row     BIGINT;
    v_missing TEXT[];
BEGIN
    IF p_rows IS NULL OR jsonb_typeof(p_rows) <> 'array' THEN
        RAISE EXCEPTION '%: expected a JSON array of rows, got %', p_what, coalesce(jsonb_typeof(p_rows), 'NULL')
            USING ERRCODE = '22023';
    END IF;
    SELECT e.i, ARRAY(SELECT f FROM unnest(p_fields) AS f WHERE jsonb_typeof(e.r) <> 'object' OR NOT e.r ? f)
      INTO v_row, v_missing
      FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS e(r, i)
     WHERE jsonb_typeof(e.r) <> 'object' OR NOT e.r ?& p_fields
     ORDER BY e.i
     LIMIT 1;
    IF v_row IS NOT NULL THEN
        RAISE EXCEPTION '%: row % (1-based) lacks %', p_what, v_row, array_to_string(v_missing, ', ')
            USING ERRCODE = '22023', HINT = 'every row names every field, with null where it has no value: ' || array_to_string(p_fields, ', ');
    END IF;
    RETURN p_rows;
END;
$$;
