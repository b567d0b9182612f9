def fmt(lines, scale):
    return ",".join(line * scale for line in lines)
