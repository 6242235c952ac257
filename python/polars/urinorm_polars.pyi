# The package Python imports to find the plugin's library (urinorm.polars
# hands its directory to Polars); the expressions are urinorm.polars'.

__version__: str
