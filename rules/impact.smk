# From a checkout: this includes the rule module that ships in the ``distea`` package. From an
# installed package, include it directly: ``from distea.rules import smk`` then ``include: smk("impact")``.
include: "../plugins/snakemake-logger-plugin-distea/distea/rules/impact.smk"
