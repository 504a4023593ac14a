ALTER TABLE `observability_destinations` ADD `secret_hint` text;--> statement-breakpoint
ALTER TABLE `observability_destinations` ADD `header_hints` text DEFAULT '{}' NOT NULL;--> statement-breakpoint
-- Rows written before sealing hold their secret and headers in clear: their hints are made here (the mask the API
-- showed), and the traces consumer seals the values at their next export (SQL cannot encrypt).
UPDATE `observability_destinations` SET `secret_hint` = CASE WHEN length(`signing_secret`) >= 12 THEN substr(`signing_secret`, 1, 4) || '...' || substr(`signing_secret`, -4) ELSE '****' END WHERE `signing_secret` LIKE 'whsec\_%' ESCAPE '\';--> statement-breakpoint
UPDATE `observability_destinations` SET `header_hints` = (SELECT json_group_object(`key`, CASE WHEN length(`value`) >= 12 THEN substr(`value`, 1, 4) || '...' || substr(`value`, -4) ELSE '****' END) FROM json_each(`observability_destinations`.`headers`)) WHERE `headers` LIKE '{%';
