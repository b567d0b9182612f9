from . import register


@register("upper")
def upper(s):
    return s.upper()
