"""EduArt Studio entry point: `streamlit run app.py` (placeholder until the dashboard lands)."""
import streamlit as st

st.set_page_config(page_title="EduArt Studio", layout="wide")
st.title("EduArt Studio")
st.write("Art-history exam benchmark for multimodal language models.")
