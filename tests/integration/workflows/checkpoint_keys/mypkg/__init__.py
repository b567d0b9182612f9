from .sub import VALUE
