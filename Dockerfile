# Production image: the web app (gunicorn), the Celery worker and beat share it.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
RUN DEBUG=0 SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput
RUN useradd --create-home attnquiz
USER attnquiz
EXPOSE 8000
CMD ["gunicorn", "attnquiz.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--threads", "8", "--worker-class", "attnquiz.gunicorn_worker.AdmissionThreadWorker", "--backlog", "2048"]
