"""Settings of the Django example project (tests/data/django_app/README.md).

The database is PostgreSQL, reached through libpq's variables (PGHOST, PGPORT, PGUSER,
PGPASSWORD, PGDATABASE), as `isopredict record` sets them for the command it runs.
"""

import os

SECRET_KEY = "django-insecure-example-project-not-for-deployment"
DEBUG = False
ALLOWED_HOSTS = ["testserver"]

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "bank",
]

ROOT_URLCONF = "bankproject.urls"

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": os.environ.get("PGDATABASE", "bank"),
        "USER": os.environ.get("PGUSER", ""),
        "PASSWORD": os.environ.get("PGPASSWORD", ""),
        "HOST": os.environ.get("PGHOST", ""),
        "PORT": os.environ.get("PGPORT", ""),
    }
}

USE_TZ = True
TIME_ZONE = "UTC"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
