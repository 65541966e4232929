"""Loading inputs: files the user names (`files`) and bundles, read into parsed inputs with
their statuses and problems (`gather`). Never imports the engine or the model."""
