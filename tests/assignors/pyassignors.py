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
