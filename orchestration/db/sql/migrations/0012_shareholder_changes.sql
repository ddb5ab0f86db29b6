-- The ISO 3166 code of a shareholder's register's country (a foreign company's register is kept in
-- the register columns, its country here), and the text of the list's changes column beside the
-- shareholder's rows ("Veränderungen": where its shares came from). NULL where the list says none
-- and for shareholders read before the reader recorded them.
ALTER TABLE content.shareholders
    ADD COLUMN register_country text,
    ADD COLUMN changes text;
