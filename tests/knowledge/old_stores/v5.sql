BEGIN TRANSACTION;
CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            at REAL NOT NULL, kind TEXT NOT NULL,
            fingerprint TEXT NOT NULL, workspace TEXT NOT NULL
        );
INSERT INTO "events" VALUES(1,1700000000.0,'offered','75a5bcb52e948d370a04','w1');
INSERT INTO "events" VALUES(2,1700000060.0,'accepted','75a5bcb52e948d370a04','w1');
INSERT INTO "events" VALUES(3,1700000120.0,'accepted','75a5bcb52e948d370a04','w1');
INSERT INTO "events" VALUES(4,1700000180.0,'succeeded','75a5bcb52e948d370a04','w1');
INSERT INTO "events" VALUES(5,1700000240.0,'manual','1d917021404d6ddec7d4','w2');
CREATE TABLE forgotten (fingerprint TEXT PRIMARY KEY, rev INTEGER NOT NULL);
CREATE TABLE imported (
            digest TEXT PRIMARY KEY,
            fingerprint TEXT NOT NULL,
            at REAL NOT NULL
        ) WITHOUT ROWID;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO "meta" VALUES('salt','abababababababababababababababababababababababababababababababab');
INSERT INTO "meta" VALUES('rev','1');
INSERT INTO "meta" VALUES('epoch','0');
INSERT INTO "meta" VALUES('refused','0');
INSERT INTO "meta" VALUES('last_prune','0');
CREATE TABLE pattern_workspaces (
            fingerprint TEXT NOT NULL, workspace TEXT NOT NULL,
            PRIMARY KEY (fingerprint, workspace)
        ) WITHOUT ROWID;
INSERT INTO "pattern_workspaces" VALUES('1d917021404d6ddec7d4','w2');
INSERT INTO "pattern_workspaces" VALUES('75a5bcb52e948d370a04','w1');
CREATE TABLE patterns (
            fingerprint TEXT PRIMARY KEY,
            language TEXT NOT NULL, source TEXT NOT NULL, code TEXT NOT NULL,
            category TEXT NOT NULL,
            has_shape INTEGER NOT NULL,
            context TEXT NOT NULL,
            body TEXT NOT NULL,
            offered INTEGER NOT NULL DEFAULT 0, accepted INTEGER NOT NULL DEFAULT 0, rejected INTEGER NOT NULL DEFAULT 0, succeeded INTEGER NOT NULL DEFAULT 0, failed INTEGER NOT NULL DEFAULT 0, manual INTEGER NOT NULL DEFAULT 0, undone INTEGER NOT NULL DEFAULT 0,
            first_seen REAL NOT NULL, last_seen REAL NOT NULL,
            workspaces INTEGER NOT NULL DEFAULT 0,
            archived_at REAL,
            archive_reason TEXT,
            rev INTEGER NOT NULL DEFAULT 0
        );
INSERT INTO "patterns" VALUES('75a5bcb52e948d370a04','python','Ruff','E711','replace_token',0,'','{"action":{"kind":"quickfix","title":"Replace with `cond is None`"},"category":"replace_token","context":[],"extra":[],"holes":[],"instances":1,"shape":null,"signature":{"code":"E711","language":"python","message":"Comparison to `None` should be `cond is None`","source":"Ruff"},"v":1}',1,2,0,1,0,0,0,1700000000.0,1700000180.0,1,NULL,NULL,1);
INSERT INTO "patterns" VALUES('1d917021404d6ddec7d4','python','Ruff','E711','replace_token',1,'Module/If','{"action":null,"category":"replace_token","context":["Module","If"],"extra":[],"holes":[],"instances":1,"shape":{"after":"$1 is None","anchor":"at_diagnostic","before":"$1 == None","unit":"Comparison"},"signature":{"code":"E711","language":"python","message":"Comparison to `None` should be `cond is None`","source":"Ruff"},"v":1}',0,0,0,0,0,1,0,1700000240.0,1700000240.0,1,NULL,NULL,1);
CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at REAL NOT NULL);
INSERT INTO "schema_migrations" VALUES(1,1700000000.0);
INSERT INTO "schema_migrations" VALUES(2,1700000000.0);
INSERT INTO "schema_migrations" VALUES(3,1700000000.0);
INSERT INTO "schema_migrations" VALUES(4,1700000000.0);
INSERT INTO "schema_migrations" VALUES(5,1700000000.0);
CREATE TABLE team_outbox (
            batch_id TEXT PRIMARY KEY,
            created_at REAL NOT NULL,
            events INTEGER NOT NULL,
            payload TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0
        );
CREATE TABLE trend (
            fingerprint TEXT NOT NULL, week INTEGER NOT NULL,
            offered INTEGER NOT NULL DEFAULT 0, accepted INTEGER NOT NULL DEFAULT 0, rejected INTEGER NOT NULL DEFAULT 0, succeeded INTEGER NOT NULL DEFAULT 0, failed INTEGER NOT NULL DEFAULT 0, manual INTEGER NOT NULL DEFAULT 0, undone INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (fingerprint, week)
        ) WITHOUT ROWID;
INSERT INTO "trend" VALUES('1d917021404d6ddec7d4',2810,0,0,0,0,0,1,0);
INSERT INTO "trend" VALUES('75a5bcb52e948d370a04',2810,1,2,0,1,0,0,0);
CREATE INDEX patterns_rule ON patterns(language, source, code);
CREATE INDEX patterns_rev ON patterns(rev);
CREATE INDEX events_at ON events(at);
CREATE INDEX patterns_rank ON patterns(
            language, source, code, fingerprint, has_shape, context, offered, accepted, rejected, succeeded, failed, manual, undone,
            first_seen, last_seen, workspaces, rev, archived_at
        ) WHERE archived_at IS NULL;
COMMIT;
