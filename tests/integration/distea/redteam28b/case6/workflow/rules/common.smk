def get_scale(wildcards):
    return config["scales"][wildcards.s] * 2
