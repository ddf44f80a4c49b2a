"""The files MemoryStore: memory documents, read indexes and vectors under NIGHTWATCH_HOME."""
