"""py: test assignors: functions from the input's JSON object to the answer's."""

from _common import assign


def good(obj):
    return assign(obj)


def raises(obj):
    return {"assignment": {}} if not obj["members"] else 1 // 0


def returns_none(obj):
    return None


def unknown_member(obj):
    answer = assign(obj)
    answer["assignment"]["ghost"] = {"active": []}
    return answer


def bad_shape(obj):
    return {"assignment": {obj["members"][0]["id"]: {"active": "0_0"}}}


NOT_A_FUNCTION = 42


def twice(obj):
    """The first member holds its first task as active and as warmup."""
    answer = assign(obj)
    first = answer["assignment"][obj["members"][0]["id"]]
    first["warmup"] = first["active"][:1]
    return answer


def unknown_task(obj):
    answer = assign(obj)
    answer["assignment"][obj["members"][0]["id"]]["standby"] = ["9_9"]
    return answer


def missing_member(obj):
    answer = assign(obj)
    del answer["assignment"][obj["members"][-1]["id"]]
    return answer


def role_misplaced(obj):
    answer = assign(obj)
    first = answer["assignment"][obj["members"][0]["id"]]
    first["actives"] = first.pop("active")
    return answer
