# From a checkout: this includes the rule module that ships in the ``snakemake_shadho`` package. From an
# installed package, include it directly: ``from snakemake_shadho.rules import smk`` then ``include: smk("hpo")``.
include: "../plugins/snakemake-shadho/snakemake_shadho/rules/hpo.smk"
