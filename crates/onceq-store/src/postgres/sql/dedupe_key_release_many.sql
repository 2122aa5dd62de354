-- Gives back keys this transaction took for publishes that then failed (a
-- later key of the same batch was reused with another payload): the failed
-- publish stores nothing, its keys included. Matching the message id we
-- wrote makes sure only our own takes are removed.
-- Each key found by a probe of the primary key (LATERAL ... OFFSET 0) and
-- deleted by its row address: as a plain join, a generic plan made on an
-- empty table walked the whole index. The rows are this transaction's own
-- claims (see publish_group), so no one else can have changed them.
DELETE FROM onceq_dedupe_keys k
USING (SELECT x.tid
       FROM unnest($1::int8[], $2::text[], $3::text[]) AS n(queue_id, key, message_id)
       CROSS JOIN LATERAL (SELECT k.ctid AS tid FROM onceq_dedupe_keys k
                           WHERE k.queue_id = n.queue_id AND k.key = n.key
                             AND k.message_id = n.message_id
                           OFFSET 0) x) f
WHERE k.ctid = f.tid
