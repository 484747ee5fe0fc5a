from django.urls import path

from artifacts.runs import views

urlpatterns = [
    path("runs/", views.run_list, name="run-list"),
    path("runs/<int:pk>/", views.run_detail, name="run-detail"),
]
