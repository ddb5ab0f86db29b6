DROP INDEX content.entities_court_idx;
