"""The files MemoryStore: memory documents, read indexes and vectors under NIGHTWATCH_HOME."""

from nightwatch.adapters.files.folder import FolderDocument, read_folder, write_folder
from nightwatch.adapters.files.small_file import FLAGS, Problem, SmallFileError, read_at_most, read_small_text
from nightwatch.adapters.files.store import FileMemoryStore

__all__ = [
    "FLAGS",
    "FileMemoryStore",
    "FolderDocument",
    "Problem",
    "SmallFileError",
    "read_at_most",
    "read_folder",
    "read_small_text",
    "write_folder",
]
