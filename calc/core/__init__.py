"""The arithmetic core: units and the house rules for showing them (units), results and how a page
reaches them (present), quoting what a reader pasted (echo), and a long computation's progress
(progress). Nothing here knows about models, cards or engines."""
