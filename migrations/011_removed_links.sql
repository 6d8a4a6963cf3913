-- Links and bare URLs the reporter made up and code removed from the report, each with the reason.
ALTER TABLE reports ADD COLUMN removed_links jsonb NOT NULL DEFAULT '[]';
