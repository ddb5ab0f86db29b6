-- Undo 0001. The roles stay: they are shared by every database of the server.
DROP TABLE IF EXISTS public.searches CASCADE;
DROP SCHEMA IF EXISTS processing CASCADE;
DROP SCHEMA IF EXISTS content CASCADE;
