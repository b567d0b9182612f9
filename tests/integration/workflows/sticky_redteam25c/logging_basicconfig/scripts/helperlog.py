import logging
log = logging.getLogger("helperlog")


def work():
    log.info("helper info")
    log.debug("helper debug")
