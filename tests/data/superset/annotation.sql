-- Superset 6.1 metadata (the columns the annotation evaluator reads) after superset_gui_promotions_annotation's
-- reference solution created its layer and annotation through the web UI (host replay, 2026-11-27).
CREATE TABLE annotation_layer (id INTEGER, name TEXT, descr TEXT);
INSERT INTO annotation_layer (id, name, descr) VALUES (1, 'Promotions', 'Marketing campaigns');
CREATE TABLE annotation (id INTEGER, layer_id INTEGER, short_descr TEXT, start_dttm TEXT, end_dttm TEXT);
INSERT INTO annotation (id, layer_id, short_descr, start_dttm, end_dttm) VALUES (1, 1, 'Spring sale', '2024-03-01 00:00:00.000000', '2024-03-15 00:00:00.000000');
