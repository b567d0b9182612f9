# From a checkout: this includes the rule module that ships in the ``nbrewind`` package. From an
# installed package, include it directly: ``from nbrewind.rules import smk`` then ``include: smk("notebook")``.
include: "../plugins/nbrewind/nbrewind/rules/notebook.smk"
