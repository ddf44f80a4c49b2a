"""Teaching in plain words: "remember that ..." and "forget that ..." understood from a thread; lessons held for an
admin's review (taught by someone who may not teach, or reading as an instruction to the model); the model's own
`memory_forget` tool, and Undo of what it forgot."""

from nightwatch.domain.teaching.forgetting import Forgetting, ForgetTool
from nightwatch.domain.teaching.intent import Intent, Teaching, TeachingPrompt, may_teach, read_teaching
from nightwatch.domain.teaching.phrases import parse_teaching
from nightwatch.domain.teaching.review import HeldLesson, HeldLessons, LessonReview, Reason, reads_as_instruction
from nightwatch.domain.teaching.service import TAUGHT, Match, Nearest, Taught, TeachingService, may_forget

__all__ = [
    "TAUGHT",
    "ForgetTool",
    "Forgetting",
    "HeldLesson",
    "HeldLessons",
    "Intent",
    "LessonReview",
    "Match",
    "Nearest",
    "Reason",
    "Taught",
    "Teaching",
    "TeachingPrompt",
    "TeachingService",
    "may_forget",
    "may_teach",
    "parse_teaching",
    "read_teaching",
    "reads_as_instruction",
]
