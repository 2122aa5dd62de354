-- Servers cache key lookups (postgres/key_cache.rs) and drop the cache on
-- `NOTIFY onceq_keys`. A statement trigger sends it for every change to the
-- keys table, whoever makes it: a server, `onceq keys ...` from the CLI, an
-- operator in psql. The notification is delivered when the change commits.
-- (The embedded store has no counterpart: it does not cache key lookups.)
CREATE FUNCTION onceq_keys_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('onceq_keys', '');
    RETURN NULL;
END
$$;

CREATE TRIGGER onceq_keys_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON onceq_api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION onceq_keys_changed();
